import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { petCreatedData, petUpdatedData } from '../../src/capabilities/pets/pet-events.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { decidePetUpdate, petChanged } from '../../src/capabilities/pets/pet-update.js'
import { describeTransitions, FINAL_STATUSES, isAllowedTransition } from '../../src/capabilities/pets/status-transitions.js'

const REX: Pet = { id: 7, name: 'Rex', categoryId: 3, status: 'available' }

describe('the pets\' rules', () => {
  test('When a status moves, then available and pending go anywhere but back from sold, and staying put is always allowed', () => {
    assert.equal(isAllowedTransition('available', 'pending'), true)
    assert.equal(isAllowedTransition('pending', 'available'), true)
    assert.equal(isAllowedTransition('pending', 'sold'), true)
    assert.equal(isAllowedTransition('sold', 'available'), false)
    assert.equal(isAllowedTransition('sold', 'sold'), true)
    assert.deepEqual(FINAL_STATUSES, ['sold'])
    assert.equal(describeTransitions(), '`available` → `pending`, `available` → `sold`, `pending` → `available`, `pending` → `sold`')
  })

  test('When an update is judged, then a missing pet comes first, then the precondition, then the move; left-out fields keep their values', () => {
    assert.deepEqual(decidePetUpdate(undefined, { name: 'Max' }, () => false), { outcome: 'not_found' })
    assert.deepEqual(decidePetUpdate({ ...REX, status: 'sold' }, { status: 'available' }, () => false), { outcome: 'precondition_failed' })
    assert.deepEqual(decidePetUpdate({ ...REX, status: 'sold' }, { status: 'available' }), { outcome: 'invalid_transition', from: 'sold', to: 'available' })
    assert.deepEqual(decidePetUpdate(REX, { status: 'pending' }, (current) => current === REX),
      { outcome: 'updated', pet: { ...REX, status: 'pending' }, previous: REX })
  })

  test('When an update changes nothing, then petChanged says so, and an event\'s previous holds only the changed fields as they were', () => {
    assert.equal(petChanged(REX, { ...REX }), false)
    assert.equal(petChanged(REX, { ...REX, categoryId: 4 }), true)
    assert.deepEqual(petCreatedData(REX), { pet: REX })
    assert.deepEqual(petUpdatedData(REX, { ...REX, name: 'Max', status: 'sold' }), { pet: { ...REX, name: 'Max', status: 'sold' }, previous: { name: 'Rex', status: 'available' } })
  })
})
