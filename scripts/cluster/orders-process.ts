/**
 * The demo agent's orders service as its own process on the cluster's port: both cluster workers
 * call the same service, as workers of one deployment call the same external API (so a refund retried
 * on the other worker meets the idempotency key its first attempt left).
 * `tsx scripts/cluster/orders-process.ts PORT`
 */
import { OrdersService } from '../../src/testing/orders-service';

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  if (!Number.isInteger(port) || port <= 0) throw new Error('usage: orders-process.ts PORT');
  const orders = new OrdersService();
  const url = await orders.start(port);
  console.log(`orders service on ${url}`);
  const stop = () => void orders.stop().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
