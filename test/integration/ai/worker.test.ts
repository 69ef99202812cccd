/**
 * The `ai` queue's Lambda handler: partial batch responses. The provider is the deterministic responder,
 * reached through AI_BASE_URL (read once at import, hence the dynamic imports after setting it).
 */
import type { SQSEvent, SQSRecord, Context } from 'aws-lambda';
import { startAiResponder } from '#infra/local/sandbox/ai-responder.ts';
import { workerContext } from '#infra/local/lambda/context.ts';
import { workers } from '#shared/routes.ts';
import { newTenant } from '../../support/api.ts';
import { putConversation, putMessage } from './fixtures.ts';

let responder: { url: string; close: () => Promise<void> };
let handler: (event: SQSEvent, context: Context) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
let updateAiSettings: typeof import('#shared/ai/settings.ts').updateAiSettings;
let replyMarker: typeof import('#shared/ai/reply-state.ts').replyMarker;

beforeAll(async () => {
  responder = await startAiResponder();
  process.env.AI_BASE_URL = `${responder.url}/v1`;
  process.env.AI_PROVIDER = 'openai';
  ({ handler } = (await import('#functions/workers/ai.ts')) as any);
  ({ updateAiSettings } = await import('#shared/ai/settings.ts'));
  ({ replyMarker } = await import('#shared/ai/reply-state.ts'));
});
afterAll(async () => {
  await responder.close();
  delete process.env.AI_BASE_URL;
  delete process.env.AI_PROVIDER;
});

const record = (id: string, body: unknown): SQSRecord => ({
  messageId: id,
  receiptHandle: id,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'test', ApproximateFirstReceiveTimestamp: String(Date.now()) },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:ai',
  awsRegion: 'us-east-1',
});

/** A fresh invocation's context each call (its remaining time counts from the call). */
const context = () => workerContext(workers.find((w) => w.queue === 'ai')!);

describe('AI worker', () => {
  it('fails only the record whose provider call failed, and drops malformed jobs', async () => {
    // Prepare
    const tenant = await newTenant();
    await updateAiSettings(tenant.businessId, { debounceSeconds: 0 });
    const cid = await putConversation(tenant.businessId);
    const failing = await putMessage(tenant.businessId, cid, 'inbound', 'ai-fail-always');
    const silentCid = await putConversation(tenant.businessId, { aiEnabled: false });
    const silent = await putMessage(tenant.businessId, silentCid, 'inbound', 'hello');
    const event: SQSEvent = {
      Records: [
        record('r-failing', { businessId: tenant.businessId, conversationId: cid, messageId: failing.id, receivedAt: failing.createdAt }),
        record('r-malformed', 'not json'),
        record('r-missing-fields', { businessId: tenant.businessId }),
        record('r-silent', { businessId: tenant.businessId, conversationId: silentCid, messageId: silent.id, receivedAt: silent.createdAt }),
      ],
    };

    // Act
    const response = await handler(event, context());

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'r-failing' }]);
    expect(await replyMarker(tenant.businessId, failing.id)).toBeUndefined();
    expect(await replyMarker(tenant.businessId, silent.id)).toBeUndefined();
  });

  it('reads its provider from the environment', async () => {
    const { aiConfig } = await import('#shared/ai/config.ts');
    expect(aiConfig).toMatchObject({ provider: 'openai', baseUrl: `${responder.url}/v1` });
  });

  it('answers an empty batch with no failures', async () => {
    expect(await handler({ Records: [] }, context())).toEqual({ batchItemFailures: [] });
  });
});
