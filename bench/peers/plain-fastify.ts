/**
 * The benchmark's plain peer: the pet API as a user could write it in an afternoon. Fastify with
 * its defaults (no logger), JSON schemas for the five routes, one bearer comparison in an
 * `onRequest` hook, and nothing else: no metrics, limits, request ids, security headers, caches
 * or group commit. It reads and writes the service's own tables, so both can run on one store.
 *
 * - `GET /v1/pets?limit&status&cursor` (listPets): an array, in id order; `cursor` is the last id
 *   of the previous page (keyset).
 * - `POST /v1/pets` (createPet): 201 with the pet, committed before the answer — SQLite in WAL
 *   mode with `synchronous=FULL`, one transaction per insert; PostgreSQL's autocommit.
 * - `GET /v1/pets/:petId` (getPet).
 * - `POST /v1/store/orders` (placeOrder): 201 with the order, committed before the answer, as a create
 *   is: one transaction makes the pet `pending` if it is `available` and inserts the order (SQLite's
 *   IMMEDIATE transaction; on PostgreSQL one autocommitted statement); 409 when the pet is not available,
 *   422 when there is no such pet. No events, as its creates write none.
 * - `GET /v1/store/inventory` (getInventory): the counts the service's triggers keep in `pet_counts`.
 *
 * `PORT` (0: any), `DATABASE_URL` (`sqlite:<path>` or `postgres://…`, migrated by the service),
 * `PEER_API_KEY`. Prints `listening <port>` once ready.
 */
import Fastify from 'fastify'

interface Pet { id: number, name: string, categoryId: number, status: string }
interface NewPet { name: string, categoryId: number, status?: string }
interface Order { id: number, petId: number, status: string, placedAt: string }
interface OrderRow { id: number, petId: number, status: string, placedAt: number | Date }
type Inventory = Record<'available' | 'pending' | 'sold', number>

interface PetRows {
  list (status: string | undefined, afterId: number, limit: number): Promise<Pet[]>
  get (id: number): Promise<Pet | undefined>
  create (pet: NewPet): Promise<Pet>
  /** The new order; undefined when the pet is not `available` (or does not exist). */
  placeOrder (petId: number): Promise<Order | undefined>
  countByStatus (): Promise<Inventory>
}

const COLUMNS = 'id, name, category_id AS "categoryId", status'
const ORDER_COLUMNS = 'id, pet_id AS "petId", status, placed_at AS "placedAt"'

const toOrder = (row: OrderRow): Order => ({ ...row, placedAt: new Date(row.placedAt).toISOString() })

function toInventory (rows: Array<{ status: string, pets: number }>): Inventory {
  const counts: Inventory = { available: 0, pending: 0, sold: 0 }
  for (const row of rows) counts[row.status as keyof Inventory] = row.pets
  return counts
}

async function sqliteRows (path: string): Promise<PetRows> {
  const { Database } = await import('../../src/infra/database/sqlite/driver.js')
  const db = new Database(path, { fileMustExist: true })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  // the service may hold the file too
  db.pragma('busy_timeout = 5000')
  const listAll = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`)
  const listByStatus = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
  const get = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE id = ?`)
  const insert = db.prepare(`INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${COLUMNS}`)
  const reservePet = db.prepare("UPDATE pets SET status = 'pending' WHERE id = ? AND status = 'available'")
  const insertOrder = db.prepare(`INSERT INTO orders (pet_id, status, placed_at) VALUES (?, 'placed', ?) RETURNING ${ORDER_COLUMNS}`)
  const place = db.transaction((petId: number) => reservePet.run(petId).changes === 1 ? insertOrder.get(petId, Date.now()) as OrderRow : undefined)
  const counts = db.prepare('SELECT status, pets FROM pet_counts')
  return {
    list: async (status, afterId, limit) => (status === undefined ? listAll.all(afterId, limit) : listByStatus.all(status, afterId, limit)) as Pet[],
    get: async (id) => get.get(id) as Pet | undefined,
    create: async (pet) => insert.get(pet.name, pet.categoryId, pet.status ?? 'available') as Pet,
    placeOrder: async (petId) => {
      const row = place.immediate(petId)
      return row === undefined ? undefined : toOrder(row)
    },
    countByStatus: async () => toInventory(counts.all() as Array<{ status: string, pets: number }>)
  }
}

async function postgresRows (url: string): Promise<PetRows> {
  const { default: pg } = await import('pg')
  // bigint columns: ids stay below 2^53
  pg.types.setTypeParser(20, Number)
  const pool = new pg.Pool({ connectionString: url })
  return {
    list: async (status, afterId, limit) => (status === undefined
      ? await pool.query<Pet>(`SELECT ${COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, limit])
      : await pool.query<Pet>(`SELECT ${COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`, [status, afterId, limit])).rows,
    get: async (id) => (await pool.query<Pet>(`SELECT ${COLUMNS} FROM pets WHERE id = $1`, [id])).rows[0],
    create: async (pet) => (await pool.query<Pet>(`INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [pet.name, pet.categoryId, pet.status ?? 'available'])).rows[0] as Pet,
    placeOrder: async (petId) => {
      const { rows } = await pool.query<OrderRow>(`WITH reserved AS (UPDATE pets SET status = 'pending' WHERE id = $1 AND status = 'available' RETURNING id)
        INSERT INTO orders (pet_id, status, placed_at) SELECT id, 'placed', now() FROM reserved RETURNING ${ORDER_COLUMNS}`, [petId])
      return rows[0] === undefined ? undefined : toOrder(rows[0])
    },
    countByStatus: async () => toInventory((await pool.query<{ status: string, pets: number }>('SELECT status, pets FROM pet_counts')).rows)
  }
}

const databaseUrl = process.env.DATABASE_URL ?? ''
const rows = databaseUrl.startsWith('sqlite:') ? await sqliteRows(databaseUrl.slice('sqlite:'.length)) : await postgresRows(databaseUrl)
const expected = `Bearer ${process.env.PEER_API_KEY ?? ''}`

const status = { type: 'string', enum: ['available', 'pending', 'sold'] } as const
const pet = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, categoryId: { type: 'integer' }, status }
} as const

const app = Fastify()

app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== expected) return reply.code(401).send({ message: 'unauthorized' })
})

app.get<{ Querystring: { limit: number, status?: string, cursor: number } }>('/v1/pets', {
  schema: {
    querystring: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, status, cursor: { type: 'integer', minimum: 0, default: 0 } }
    },
    response: { 200: { type: 'array', items: pet } }
  }
}, async (request) => rows.list(request.query.status, request.query.cursor, request.query.limit))

app.post<{ Body: NewPet }>('/v1/pets', {
  schema: {
    body: {
      type: 'object',
      required: ['name', 'categoryId'],
      additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, categoryId: { type: 'integer' }, status }
    },
    response: { 201: pet }
  }
}, async (request, reply) => reply.code(201).send(await rows.create(request.body)))

app.get<{ Params: { petId: number } }>('/v1/pets/:petId', {
  schema: {
    params: { type: 'object', properties: { petId: { type: 'integer', minimum: 1 } } },
    response: { 200: pet }
  }
}, async (request, reply) => {
  const found = await rows.get(request.params.petId)
  return found ?? reply.code(404).send({ message: 'not found' })
})

app.post<{ Body: { petId: number } }>('/v1/store/orders', {
  schema: {
    body: { type: 'object', required: ['petId'], additionalProperties: false, properties: { petId: { type: 'integer', minimum: 1 } } },
    response: {
      201: {
        type: 'object',
        required: ['id', 'petId', 'status', 'placedAt'],
        properties: { id: { type: 'integer' }, petId: { type: 'integer' }, status: { type: 'string' }, placedAt: { type: 'string' } }
      }
    }
  }
}, async (request, reply) => {
  const order = await rows.placeOrder(request.body.petId)
  if (order !== undefined) return reply.code(201).send(order)
  return await rows.get(request.body.petId) === undefined
    ? reply.code(422).send({ message: 'no such pet' })
    : reply.code(409).send({ message: 'pet not available' })
})

app.get('/v1/store/inventory', {
  schema: {
    response: {
      200: {
        type: 'object',
        required: ['available', 'pending', 'sold'],
        properties: { available: { type: 'integer' }, pending: { type: 'integer' }, sold: { type: 'integer' } }
      }
    }
  }
}, async () => rows.countByStatus())

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.stdout.write(`listening ${new URL(address).port}\n`)

const stop = (): void => { app.close().then(() => { process.exit(0) }, () => { process.exit(1) }) }
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
