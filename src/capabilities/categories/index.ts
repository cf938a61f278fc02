/**
 * Categories (beta): the names storefronts show for the `categoryId` pets carry, with each category's pets by
 * status (`/v1/categories`), each name given recorded as a `category.updated` event.
 */
export { categories } from './categories-plugin.js'
export { default as categoriesRoutes } from './categories-routes.js'
export { CATEGORY_ERRORS } from './category-errors.js'
export { CATEGORY_EVENTS, CATEGORY_UPDATED_EXAMPLE, CategoryUpdatedEventSchema, type CategoryRecord, type CategoryUpdatedEvent } from './category-event-schemas.js'
export { CATEGORY_NAME_MAX_LENGTH, type Category } from './category-schemas.js'
export type { CategoryStore } from './store/category-store.js'
