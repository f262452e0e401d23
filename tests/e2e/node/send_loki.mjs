// Logs COUNT lines with pino into pino-loki (in this process, batched), pointed at
// Limelight with the key as the Basic auth password; exits once the last batch is sent.
import pino from 'pino'
import { pinoLoki } from 'pino-loki'
import { once } from 'node:events'

const { LIMELIGHT_URL, LIMELIGHT_KEY, COUNT = '10', DATASET = 'pino-loki' } = process.env
const stream = pinoLoki({
  host: LIMELIGHT_URL,
  basicAuth: { username: 'pino', password: LIMELIGHT_KEY },
  labels: { service_name: 'shop', dataset: DATASET },
  batching: { interval: 0.2 }
})
const logger = pino({}, stream)
for (let i = 0; i < Number(COUNT); i++) {
  logger.info({ orderId: `o-${i}`, meta: { traceId: `t-${i}` } }, 'order placed')
}
stream.end()
await once(stream, 'close')
console.log('sent')
