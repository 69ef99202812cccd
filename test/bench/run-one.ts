/**
 * Runs one benchmark module in a process of its own (so modules never share loaded configuration or
 * module state) and prints its figures as one JSON line after BENCH_RESULT. Called by run.ts.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule } from './types.ts';

const [name, quickFlag] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const { ensureTable } = await import('../../infra/local/dynamo.ts');
await ensureTable(process.env.DYNAMODB_ENDPOINT!, process.env.TABLE_NAME!);
// The queue settings a deployed function has, at SQS and Scheduler stand-ins that drop what they receive; a module
// that runs workers (webhooks) starts queue services of its own.
const { startQueueServices } = await import('../../infra/local/aws/queue-services.ts');
const sink = await startQueueServices();
sink.sqs.onMessage((queue) => sink.sqs.take(queue));
Object.assign(process.env, sink.environment);
let figures;
if (quickFlag.startsWith('scale=')) {
  // `--scale`: the one module that loads a million contacts (segments-scale.ts), not a `.bench.ts` of the normal runs.
  const scale = (await import(join(here, `${name}.ts`))) as { run: (o: { size: number }) => Promise<unknown> };
  figures = await scale.run({ size: Number(quickFlag.slice('scale='.length)) });
} else {
  const mod = (await import(join(here, `${name}.bench.ts`))) as BenchModule;
  figures = await mod.run({ quick: quickFlag === 'quick', dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT! });
}
process.stdout.write(`\nBENCH_RESULT ${JSON.stringify(figures)}\n`);
process.exit(0);
