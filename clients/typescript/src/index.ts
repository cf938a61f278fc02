/**
 * Typed client for the Pet Store HTTP/JSON API v1.
 * @packageDocumentation
 */
export { createClient, type AllPetsQuery, type CreatePetOptions, type FollowEventsOptions, type PetStoreClient, type UpdatePetOptions } from './client.js'
export type { AllOrdersQuery, OrderOperations, PlaceOrderOptions, UpdateOrderOptions } from './orders.js'
export type { CategoryOperations } from './categories.js'
export type { CreateWebhookEndpointOptions, UpdateWebhookEndpointOptions, WebhookEndpointOperations } from './webhook-endpoints.js'
export { PetStoreDeprecationWarning } from './deprecation.js'
export { PetStoreError, type ClientErrorCode, type OperationName, type PetStoreErrorCode } from './errors.js'
export type { ClientOptions, RequestOptions } from './options.js'
export type { RetryEvent } from './transport.js'
export type {
  ErrorBody, EventPage, EventType, Int64, Inventory, ListEventsQuery, ListOrdersQuery, ListPetsQuery, NewOrder, NewPet, Order, OrderPage, OrderPatch, OrderStatus, TaggedOrder, Pet, PetChanges, PetCreatedEvent, PetPage, PetPatch, PetStatus,
  PetStoreEvent, PetUpdatedEvent, ServiceErrorCode, UpdatedPet, CreatedWebhookEndpoint, ListWebhookAttemptsQuery, ListWebhookEndpointsQuery, NewWebhookEndpoint,
  RotatedWebhookSecret, TaggedWebhookEndpoint, WebhookAttempt, WebhookAttemptPage, WebhookEndpoint, WebhookEndpointPage, WebhookEndpointPatch, WebhookRecovered,
  WebhookRecovery, WebhookResent, WebhookTestResult, Category, CategoryName, CategoryPage, CategoryUpdatedEvent, ListCategoriesQuery, TaggedCategory
} from './types.js'
export type { components, operations, paths } from './generated/openapi.js'
