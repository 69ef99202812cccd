/** The metrics module prints CloudWatch EMF records with the dimensions the dashboards and alarms group by. */
export {};
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const mod = await import('#shared/metrics/metrics.ts');

const capture = () => {
  const lines: any[] = [];
  (mod.metrics as any).console = { log: (line: string) => lines.push(JSON.parse(line)), warn: () => undefined, error: () => undefined, info: () => undefined, debug: () => undefined };
  return lines;
};

describe('metrics', () => {
  it('records sends by type and failures by upstream code, one EMF line each', () => {
    // Prepare
    const lines = capture();
    // Act
    mod.messageSent('image');
    mod.messageFailed('text', '131047');
    // Assess
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ MessagesSent: 1, messageType: 'image', service: expect.any(String) });
    expect(lines[0]._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: mod.NAMESPACE, Metrics: [{ Name: 'MessagesSent', Unit: 'Count' }] });
    expect(lines[0]._aws.CloudWatchMetrics[0].Dimensions[0]).toEqual(expect.arrayContaining(['messageType']));
    expect(lines[1]).toMatchObject({ MessagesFailed: 1, messageType: 'text', code: '131047' });
    expect(lines[1]).not.toHaveProperty('MessagesSent');
  });

  it('records webhook deliveries and queue ages from SQS attributes', () => {
    // Prepare
    const lines = capture();
    // Act
    mod.webhookDelivery('failed', 'message.sent');
    mod.recordQueueAges('events', [{ attributes: { SentTimestamp: '1000' } }, { attributes: {} }], 1750);
    // Assess
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ WebhookDeliveries: 1, outcome: 'failed', event: 'message.sent' });
    expect(lines[1]).toMatchObject({ QueueMessageAge: 750, queue: 'events' });
    expect(lines[1]._aws.CloudWatchMetrics[0].Metrics[0].Unit).toBe('Milliseconds');
  });
});
