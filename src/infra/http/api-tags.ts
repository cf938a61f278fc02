import type { FastifyInstance } from 'fastify'

/** A tag of the OpenAPI document: the group of operations a capability declares, and what it is. */
export interface ApiTag {
  name: string
  description: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The tags the capabilities declared, in the order they registered (the document lists them). */
    apiTags: ApiTag[]
  }
}

/**
 * Declares a tag of the document for a capability's operations, at the capability's registration: the document
 * (registered after every capability) lists the tags so declared, so a new capability's tag is no edit of the docs.
 */
export function registerApiTag (app: FastifyInstance, tag: ApiTag): void {
  if (!app.hasDecorator('apiTags')) app.decorate('apiTags', [])
  if (app.apiTags.some(({ name }) => name === tag.name)) throw new Error(`API tag ${tag.name} is declared twice`)
  app.apiTags.push(tag)
}

/** The tags the capabilities declared so far. */
export function apiTagsOf (app: FastifyInstance): readonly ApiTag[] {
  return app.hasDecorator('apiTags') ? app.apiTags : []
}
