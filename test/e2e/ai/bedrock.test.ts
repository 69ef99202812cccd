/**
 * The AI agent as `npm start` runs it: the Bedrock provider, as deployed, asking the local Bedrock runtime stand-in
 * through the SDK's endpoint variable (the other AI tests pin the OpenAI-compatible provider, whose fault switches
 * they drive through the sandbox's responder).
 */
import { startMessagingStack, randomPhone, type MessagingStack } from '../messages/stack.ts';

// What test/support/env.ts pins for the other tests: here the local stack's own defaults apply.
delete process.env.AI_PROVIDER;
delete process.env.AI_MODEL;

let m: MessagingStack;
beforeAll(async () => {
  m = await startMessagingStack();
}, 60_000);
afterAll(() => m?.stop());

describe('the AI agent over the local stack, with its default provider', () => {
  it('answers an inbound message through Bedrock\'s Converse API, with the deployment\'s default model', async () => {
    // Prepare
    const t = await m.tenant();
    expect((await t.call('PATCH', '/agent/v1/settings', { debounceSeconds: 0 })).status).toBe(200);
    const from = randomPhone();
    const asked = m.stack.bedrock.models.length;

    // Act
    await t.inbound(from, '¿Tienen talla mediana?');

    // Assess
    const replies = (await m.sent(from)).filter((p: any) => p.type === 'text' && String(p.text?.body).startsWith('[AI]'));
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('¿Tienen talla mediana?');
    expect(m.stack.bedrock.models.slice(asked)).toEqual(['amazon.nova-lite-v1:0']);
  });
});
