import { randomUUID } from 'node:crypto'
import type { DatabaseConnection } from './database-connection.js'

/** The setting that names the deployment: every instance on one database reads the same one. */
export const DEPLOYMENT_ID_SETTING = 'deployment_id'

/**
 * Ends the identity of a restored copy (`restore`): its events after the backup reuse ids its broker consumers
 * already saw under the old identity, so the copy takes a new one at its next start.
 */
export const FORGET_DEPLOYMENT_ID_SQLITE = `DELETE FROM settings WHERE name = '${DEPLOYMENT_ID_SETTING}'`

const known = new WeakMap<DatabaseConnection, Promise<string>>()

/**
 * The deployment's identity: a UUID kept in the database's settings, created by the first instance that asks,
 * the same for every instance and process of the deployment and different for any other (staging, a laptop with
 * a copied `.env` but its own database). What leaves the service and must not collide with another deployment's
 * (bus message ids, the CloudEvents `source`, Redis keys) is built from it.
 */
export async function deploymentIdOf (database: DatabaseConnection): Promise<string> {
  let id = known.get(database)
  if (id === undefined) {
    id = database.ensureSetting(DEPLOYMENT_ID_SETTING, randomUUID())
    known.set(database, id)
    id.catch(() => { known.delete(database) })
  }
  return await id
}
