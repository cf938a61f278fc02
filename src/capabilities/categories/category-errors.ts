import { declareErrors } from '../../infra/errors/catalogue.js'

/** The error codes of `/v1/categories`, declared by this capability into the one catalogue (stable API: added to, never renamed). */
export const CATEGORY_ERRORS = declareErrors({
  category_not_found: { status: 404, message: 'No category has this id: no record, and no pet carries it.' },
  category_name_taken: { status: 409, message: 'Another category has this name already.' }
})

declare module '../../infra/errors/catalogue.js' {
  interface DeclaredErrorCodes {
    category_not_found: true
    category_name_taken: true
  }
}
