// Logs COUNT lines with pino into pino-elasticsearch, pointed at Limelight's /es with the
// key as the password; prints "inserted N" once the bulk helper has finished.
import pino from 'pino'
import pinoElastic from 'pino-elasticsearch'

const { LIMELIGHT_URL, LIMELIGHT_KEY, COUNT = '10', INDEX = 'pino-es' } = process.env
const stream = pinoElastic({
  index: INDEX,
  node: `${LIMELIGHT_URL}/es`,
  esVersion: 8,
  flushBytes: 500,
  flushInterval: 200,
  auth: { username: 'pino', password: LIMELIGHT_KEY }
})
stream.on('insert', (stats) => console.log(`inserted ${stats.successful} failed ${stats.failed}`))
stream.on('insertError', (error) => console.error('insertError', error.message))
stream.on('error', (error) => { console.error('error', error); process.exitCode = 1 })
const logger = pino({ base: { service: 'shop' } }, stream)
for (let i = 0; i < Number(COUNT); i++) {
  logger.info({ orderId: `o-${i}`, amount: i * 10 }, 'order placed')
}
stream.end()
