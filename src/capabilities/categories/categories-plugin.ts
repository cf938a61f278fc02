import fp from 'fastify-plugin'
import { registerApiTag } from '../../infra/http/api-tags.js'
import { PagedList } from '../../infra/http/paged-list.js'
import { registerEventTypes } from '../events/index.js'
import { CATEGORY_EVENTS } from './category-event-schemas.js'
import { CATEGORIES_LIST, CATEGORY_SCHEMAS } from './category-schemas.js'
import { createCategoryStore } from './store/create-category-store.js'
import type { CategoryStore } from './store/category-store.js'
import './category-errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The names given to categories, each change with its `category.updated` event. */
    categoryStore: CategoryStore
    /** listCategories' cursors and links (any int64), under a secret every instance of the database shares. */
    categoryList: PagedList<never>
  }
}

/**
 * The categories capability (beta): its store and cursors on the app's database, its schemas as the document's
 * components, its tag, and its event type registered with the feed. Its pets are counted by pets (`app.petCategoryCounts`).
 */
export const categories = fp(async (app) => {
  app.decorate('categoryStore', app.instrumentStore(createCategoryStore(app.database, app.clock)))
  app.decorate('categoryList', await PagedList.open(app.database, CATEGORIES_LIST))
  for (const schema of CATEGORY_SCHEMAS) app.addSchema(schema)
  registerApiTag(app, { name: 'categories', description: 'The categories pets carry, their names and their pets by status (beta).' })
  registerEventTypes(app, CATEGORY_EVENTS)
}, { name: 'petstore-categories', dependencies: ['petstore-database', 'petstore-pets'] })
