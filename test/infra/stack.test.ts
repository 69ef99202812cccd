/**
 * The synthesized CloudFormation template, asserted with aws-cdk-lib/assertions. Bundling is skipped
 * (context aws:cdk:bundling-stacks = []) so the test checks the stack's shape in seconds; a real
 * `npx cdk synth` bundles every function with esbuild.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
// cdk-nag is CommonJS without static named exports.
import cdkNag from 'cdk-nag';
const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;
import { ServiceStack } from '#infra/stack.ts';
import { routes, workers } from '#functions/routes.ts';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new ServiceStack(app, 'TestStack', { env: { account: '123456789012', region: 'eu-west-1' } });
Aspects.of(stack).add(new AwsSolutionsChecks());
Aspects.of(stack).add(new ServerlessChecks());
const template = Template.fromStack(stack);
const handlerModules = new Set([...routes.map((r) => r.handler), ...workers.map((w) => w.handler)]);

describe('CDK stack', () => {
  it('has one Lambda function per handler module, all nodejs22.x', () => {
    const fns = template.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } });
    // + the outbox sweep when present, + CDK's own log-retention/bucket helpers are not nodejs22 Lambda functions of ours
    expect(Object.keys(fns).length).toBeGreaterThanOrEqual(handlerModules.size);
    expect(stack.functions.size).toBeGreaterThanOrEqual(handlerModules.size);
    for (const handler of handlerModules) expect(stack.functions.has(handler)).toBe(true);
  });

  it('routes every row of the route table to the function of its handler module', () => {
    for (const route of routes) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `${route.method} ${route.path}` });
    }
    expect(Object.keys(template.findResources('AWS::ApiGatewayV2::Route')).length).toBe(routes.length);
  });

  it('defines the single table: pk/sk, the two indexes, TTL, PITR, on-demand', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      GlobalSecondaryIndexes: Match.arrayWith([
        Match.objectLike({ IndexName: 'gsi1' }),
        Match.objectLike({ IndexName: 'shard', Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['proj'] } }),
      ]),
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });

  it('keeps media private, encrypted and TLS-only', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: Match.objectLike({}),
      LoggingConfiguration: Match.objectLike({ LogFilePrefix: 'media/' }),
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('gives every worker a queue with a dead-letter queue and a partial-batch event source', () => {
    for (const worker of workers) {
      expect(stack.queues.has(worker.queue)).toBe(true);
    }
    const redrive = template.findResources('AWS::SQS::Queue', { Properties: { RedrivePolicy: Match.anyValue() } });
    expect(Object.keys(redrive)).toHaveLength(workers.length);
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', { Properties: { FunctionResponseTypes: ['ReportBatchItemFailures'] } });
    expect(Object.keys(mappings)).toHaveLength(workers.length);
  });

  it('grants no "*" action on data resources', () => {
    const policies = template.findResources('AWS::IAM::Policy');
    for (const policy of Object.values(policies)) {
      for (const statement of (policy as any).Properties.PolicyDocument.Statement) {
        const actions = [statement.Action].flat();
        for (const action of actions) expect(action).not.toMatch(/^(\*|dynamodb:\*|s3:\*|sqs:\*)$/);
      }
    }
  });

  it('passes the cdk-nag AwsSolutions and Serverless packs (every suppression carries a reason)', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-|Serverless-'));
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-|Serverless-'));
    const describe = (a: { id: string; entry: { data: unknown } }) => `${a.id}: ${String(a.entry.data).slice(0, 160)}`;
    expect(errors.map(describe)).toEqual([]);
    expect(warnings.map(describe)).toEqual([]);
  });
});
