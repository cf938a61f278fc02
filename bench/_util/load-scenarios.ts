import { createPet } from '../scenarios/create-pet.js'
import { deepPage } from '../scenarios/deep-page.js'
import { getInventory } from '../scenarios/get-inventory.js'
import { getPet } from '../scenarios/get-pet.js'
import { listCreateMix } from '../scenarios/list-create-mix.js'
import { listPets } from '../scenarios/list-pets.js'
import { placeOrder } from '../scenarios/place-order.js'
import type { LoadScenario } from './load-scenario.js'

/** Every load scenario, in this order: writes last, so the reads before them read the store as seeded. */
export const LOAD_SCENARIOS: readonly LoadScenario[] = [listPets, deepPage, getPet, getInventory, createPet, placeOrder, listCreateMix]
