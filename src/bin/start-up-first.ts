// imported first by server.ts, so that it runs before any other module of the bundle is evaluated
import { holdYoungGenerationWhileStarting } from '../infra/runtime/start-up-heap.js'

holdYoungGenerationWhileStarting()
