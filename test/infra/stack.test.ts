/**
 * The synthesized CloudFormation template is the truth: the stack is synthesized once, with every function
 * bundled for real (infra/bundle.ts: index.mjs and its chunks), under the cdk-nag packs as infra/app.ts runs them. For every
 * function, what its code needs (infra/needs.ts, derived from the files its bundle is built from) must be in the
 * template — settings, grants on the right resources — and nothing beyond it; the handler and every file it loads must be inside its asset,
 * and its architecture must match the native binaries the asset carries.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { App, Stack, Validations, aws_s3 as s3 } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
// cdk-nag is CommonJS without static named exports.
import cdkNag from 'cdk-nag';
import { ServiceStack } from '#infra/stack.ts';
import { writeOpenApiDocument } from '#infra/openapi-document.ts';
import { functionSpecs, NOT_FOUND_HANDLER } from '#infra/functions.ts';
import { queueUrlSetting } from '#infra/names.ts';
import { UNSET_TOKEN } from '#infra/resources.ts';
import { routes, scheduled, workers } from '#shared/routes.ts';
import { routeMatcher, shadowedMethods } from '#shared/http/route-match.ts';
import { samEnvironment, type LocalStack } from '#infra/sam/env.ts';
import { routeContext, workerContext } from '#infra/local/lambda/context.ts';
import { allows, nativeArchitectures, SynthesizedFunctions, actionsOf } from './template.ts';

const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;

/** An app as infra/app.ts builds it (cdk-nag packs as validation plugins), with the asset metadata the CDK CLI asks for. */
const outdirs: string[] = [];
const nagApp = () => {
  const app = new App({ context: { 'aws:cdk:enable-asset-metadata': true }, outdir: mkdtempSync(join(tmpdir(), 'cdk-test-')) });
  outdirs.push(app.outdir);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return app;
};

// A foundation model, and an inference profile (the way Bedrock serves a model in Regions without its own throughput).
const AI_MODELS = ['amazon.nova-micro-v1:0', 'eu.anthropic.claude-3-haiku-20240307-v1:0'];
const app = nagApp();
const stack = new ServiceStack(app, 'TestStack', { env: { account: '123456789012', region: 'eu-west-1' }, aiModels: AI_MODELS, openApiDocumentPath: await writeOpenApiDocument() });
const template = Template.fromStack(stack);
const synthesized = new SynthesizedFunctions(stack, template, app.outdir);
const handlers = functionSpecs().map((spec) => spec.handler);
const id = (construct: { node: { defaultChild?: unknown } }) => synthesized.logicalId(construct);
const { table, bucket, upstreamSecret } = stack.resources;

/** Settings a function gets whatever its code: the runtime's source maps and the Powertools service name. */
const PLATFORM_SETTINGS = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME'];

/** The package-relative files a module of the asset loads (`from "./…"` and `import("./…")`), transitively. */
const loadedFiles = (dir: string, file = 'index.mjs', seen = new Set<string>()): Set<string> => {
  seen.add(file);
  const code = readFileSync(join(dir, file), 'utf8');
  for (const [, spec] of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["'](\.\.?\/[^"']+)["']/g)) {
    const next = resolve(dirname(join(dir, file)), spec).slice(dir.length + 1);
    if (!seen.has(next)) {
      expect([file, spec, existsSync(join(dir, next))]).toEqual([file, spec, true]);
      loadedFiles(dir, next, seen);
    }
  }
  return seen;
};

afterAll(() => outdirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The native media packages whose code a function package bundles (sharp names its `@img/sharp-<platform>` builds, ffmpeg its installer). */
function bundledMediaModules(dir: string): string[] {
  const code = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.mjs')).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
  return ['@img/sharp', '@ffmpeg-installer'].filter((pkg) => code.includes(pkg));
}

describe('CDK stack', () => {
  it('has one nodejs22.x Lambda per handler module: every route, worker, the outbox sweep and the not-found function', () => {
    expect(handlers).toEqual(expect.arrayContaining([...routes.map((r) => r.handler), ...workers.map((w) => w.handler), ...scheduled.map((s) => s.handler), NOT_FOUND_HANDLER]));
    for (const handler of handlers) {
      expect(synthesized.resource(stack.functions.get(handler)!)).toMatchObject({ Type: 'AWS::Lambda::Function', Properties: { Runtime: 'nodejs22.x', Handler: 'index.handler' } });
    }
  });

  it('gives every function the memory and time-out the local runtime runs it with, and each queue a visibility time-out of 6 of them', () => {
    const local = [
      ...routes.map((route) => [route.handler, routeContext(route)] as const),
      ...workers.map((worker) => [worker.handler, workerContext(worker)] as const),
    ];
    for (const [handler, context] of local) {
      const { Timeout, MemorySize } = synthesized.resource(stack.functions.get(handler)!).Properties;
      expect({ handler, Timeout, MemorySize }).toEqual({ handler, Timeout: Math.round(context.getRemainingTimeInMillis() / 1000), MemorySize: Number(context.memoryLimitInMB) });
    }
    for (const s of scheduled) expect(synthesized.resource(stack.functions.get(s.handler)!).Properties.Timeout).toBe(s.timeoutSeconds);
    const resources = template.toJSON().Resources as Record<string, any>;
    for (const worker of workers) {
      const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === id(stack.functions.get(worker.handler)!));
      const queue = resources[mapping.Properties.EventSourceArn['Fn::GetAtt'][0]];
      expect({ handler: worker.handler, enough: queue.Properties.VisibilityTimeout >= 6 * worker.timeoutSeconds }).toEqual({ handler: worker.handler, enough: true });
    }
  });

  it('routes every row of the route table to its function, and everything else ($default) to the not-found function', () => {
    for (const route of routes) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `${route.method} ${route.path}` });
    }
    const defaults = template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: '$default' } });
    expect(Object.keys(defaults)).toHaveLength(1);
    expect(Object.keys(template.findResources('AWS::ApiGatewayV2::Route')).length).toBe(routes.length + shadowedMethods(routes).length + 1);
    const target = (Object.values(defaults)[0] as any).Properties.Target['Fn::Join'][1][1].Ref;
    const integration = template.toJSON().Resources[target];
    expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(`"${id(stack.functions.get(NOT_FOUND_HANDLER)!)}"`);
  });

  it('takes every known path with every method to the function the local server answers it with, routed as API Gateway routes', () => {
    // Prepare: the template's routes, each with the function its integration invokes
    const resources = template.toJSON().Resources as Record<string, any>;
    const functionOfRoute = (route: any) => JSON.stringify(resources[route.Properties.Target['Fn::Join'][1][1].Ref].Properties.IntegrationUri);
    const deployed = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').map((r) => {
      const [method, path] = r.Properties.RouteKey === '$default' ? ['$default', ''] : r.Properties.RouteKey.split(' ');
      const segments = path.split('/').filter(Boolean);
      const regex = new RegExp(`^${segments.map((s: string) => (s.startsWith('{') ? '/[^/]+' : `/${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)).join('')}$`);
      return { method, regex, literals: segments.filter((s: string) => !s.startsWith('{')).length, invokes: functionOfRoute(r) };
    });
    // API Gateway: a route of the request's method whose path matches (literal segments beat parameters), else $default.
    const gateway = (method: string, path: string) =>
      deployed.filter((r) => r.method === method && r.regex.test(path)).sort((a, b) => b.literals - a.literals)[0]?.invokes ?? deployed.find((r) => r.method === '$default')!.invokes;
    const local = routeMatcher(routes);
    const notFound = `"${id(stack.functions.get(NOT_FOUND_HANDLER)!)}"`;

    for (const path of new Set(routes.map((r) => r.path))) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        // Act
        const sample = path.replace(/\{\w+\}/g, 'x');
        const found = local(method, sample);
        // Assess: the route's own function where the local server takes the request, else the not-found function (404, 405)
        const expected = found && 'route' in found ? `"${id(stack.functions.get(found.route.handler)!)}"` : notFound;
        expect([method, path, gateway(method, sample).includes(expected)]).toEqual([method, path, true]);
      }
    }
  });

  describe('gives every function what its code needs, and no more', () => {
    const cases = handlers.map((handler) => [handler] as const);

    it.each(cases)('%s: settings', (handler) => {
      const fn = stack.functions.get(handler)!;
      const needs = stack.needs.get(handler)!;
      const env = synthesized.environment(fn);
      for (const name of needs.requiredSettings) {
        expect([name, env[name]]).toEqual([name, expect.anything()]);
        expect(env[name]).not.toBe('');
      }
      // Each resource setting names the resource the function is granted (a reference, resolved at deploy).
      const references = (name: string, construct: { node: { defaultChild?: unknown } }) =>
        expect([name, JSON.stringify(env[name] ?? null)]).toEqual([name, expect.stringContaining(`"${id(construct)}"`)]);
      if (needs.table) references('TABLE_NAME', table);
      if (needs.bucket) references('MEDIA_BUCKET', bucket);
      if (needs.upstreamSecret) references('UPSTREAM_SECRET_ARN', upstreamSecret);
      for (const queue of needs.queues) references(queueUrlSetting(queue), stack.queues.get(queue)!);
      if (needs.scheduler) references('BROADCAST_QUEUE_ARN', stack.queues.get('broadcasts')!);
      if (needs.bedrock) expect(env.AI_ALLOWED_MODELS).toBe(AI_MODELS.join(','));
      // The derivation is the upper bound: a function gets no setting its code does not read.
      const read = new Set([...needs.requiredSettings, ...needs.optionalSettings, ...PLATFORM_SETTINGS]);
      const implied = Object.keys(env).filter((name) => !read.has(name));
      expect(implied.every((name) => /^(TABLE_NAME|MEDIA_BUCKET|UPSTREAM_SECRET_ARN|BUSINESS_TOKEN_SECRET_PREFIX|BROADCAST_QUEUE_ARN|BROADCAST_SCHEDULER_ROLE_ARN|AI_ALLOWED_MODELS|QUEUE_URL_\w+)$/.test(name))).toBe(true);
      if (!needs.queues.length) expect(Object.keys(env).filter((name) => name.startsWith('QUEUE_URL_'))).toEqual([]);
    });

    it.each(cases)('%s: grants', (handler) => {
      const fn = stack.functions.get(handler)!;
      const needs = stack.needs.get(handler)!;
      const statements = synthesized.statements(fn);
      const tableId = id(table);
      expect(allows(statements, 'dynamodb:PutItem', tableId) && allows(statements, 'dynamodb:Query', tableId)).toBe(needs.table);
      expect(statements.some((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')))).toBe(needs.table);
      expect(allows(statements, 'dynamodb:PartiQLSelect', tableId)).toBe(needs.partiql);
      expect(statements.some((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:PartiQL') && a !== 'dynamodb:PartiQLSelect'))).toBe(false);
      for (const [queue, q] of stack.queues) {
        expect([queue, allows(statements, 'sqs:SendMessage', id(q))]).toEqual([queue, needs.queues.includes(queue)]);
      }
      expect(allows(statements, 's3:PutObject', id(bucket)) && allows(statements, 's3:GetObject*', id(bucket))).toBe(needs.bucket);
      expect(statements.some((st) => actionsOf(st).some((a) => a.startsWith('s3:')))).toBe(needs.bucket);
      expect(allows(statements, 'secretsmanager:GetSecretValue', id(upstreamSecret))).toBe(needs.upstreamSecret);
      expect(statements.some((st) => JSON.stringify(st.Resource).includes(`:secret:${stack.businessSecretsPrefix}*`))).toBe(needs.businessSecrets);
      expect(allows(statements, 'scheduler:CreateSchedule') && allows(statements, 'iam:PassRole')).toBe(needs.scheduler);
      expect(statements.some((st) => actionsOf(st).some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole'))).toBe(needs.scheduler);
      const bedrock = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('bedrock:')));
      expect(bedrock.length > 0).toBe(needs.bedrock);
    });

    it.each(cases)('%s: the handler is inside its asset, and the architecture loads its native binaries', (handler) => {
      const fn = stack.functions.get(handler)!;
      const { Metadata, Properties } = synthesized.resource(fn);
      expect(Metadata).toMatchObject({ 'aws:asset:path': expect.stringMatching(/^asset\./), 'aws:asset:property': 'Code' });
      const dir = synthesized.assetDir(fn);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code).toMatch(/export\s*\{[^}]*\bhandler\s*\}|export\s*\{[^}]*\bas handler\b/);
      // Self-contained: every chunk index.mjs loads, statically or on first use, is in the asset.
      loadedFiles(dir);
      const architecture = Properties.Architectures[0];
      for (const [file, arch] of nativeArchitectures(dir)) expect([file, arch]).toEqual([file, architecture]);
    });
  });

  it('loads no undici at a cold start: every package reaches node:http through its shim, never its ES module facade', () => {
    // Node builds node:http's ES module facade by reading every export, and three are getters that load Node's own
    // undici: about 40 ms of CPU per cold start (infra/shims/node-http.ts). One process imports every package in
    // turn, as the Lambda runtime imports one, and names the first after which undici is loaded.
    const packages = handlers.map((handler) => [handler, join(synthesized.assetDir(stack.functions.get(handler)!), 'index.mjs')]);
    const script = `for (const [handler, file] of JSON.parse(process.argv[1])) { await import(file); if (process.moduleLoadList.some((m) => m.includes('undici'))) { console.log(handler); process.exit(0); } } console.log('none');`;
    const first = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(packages)], {
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', LOG_LEVEL: 'SILENT', NODE_OPTIONS: '' },
    }).toString().trim();
    expect(first).toBe('none');
  });

  it('derives the needs from the code (spot checks against what the handlers plainly do)', () => {
    const needs = (handler: string) => stack.needs.get(handler)!;
    // The reference pages, the handshake and the not-found function touch no table (issue 23, least privilege).
    for (const handler of ['http/meta/openapi', 'http/meta/docs', 'http/meta/docs-asset', 'http/upstream/verify', NOT_FOUND_HANDLER]) {
      expect([handler, needs(handler).table]).toEqual([handler, false]);
    }
    expect(needs('http/team/list').table).toBe(true);
    expect(needs('workers/event-fanout')).toMatchObject({ partiql: true, queues: expect.arrayContaining(['webhook-deliveries']) });
    expect(needs('http/upstream/receive').queues).toContain('upstream-events');
    expect(needs('workers/media')).toMatchObject({ bucket: true });
    expect(needs('workers/ai')).toMatchObject({ bedrock: true });
    expect(needs('http/broadcasts/create')).toMatchObject({ scheduler: true });
    expect(needs('http/broadcasts/list').scheduler).toBe(false);
  });

  it('runs the media worker on x86_64 with the x64 sharp and ffmpeg it ships; every other function on arm64 without native code', () => {
    const media = stack.functions.get('workers/media')!;
    expect(synthesized.resource(media).Properties.Architectures).toEqual(['x86_64']);
    const binaries = [...nativeArchitectures(synthesized.assetDir(media)).keys()].join('\n');
    expect(binaries).toMatch(/sharp-linux-x64/);
    expect(binaries).toMatch(/@ffmpeg-installer\/linux-x64\/ffmpeg/);
    for (const handler of handlers.filter((h) => h !== 'workers/media')) {
      const fn = stack.functions.get(handler)!;
      expect([handler, synthesized.resource(fn).Properties.Architectures]).toEqual([handler, ['arm64']]);
      expect([handler, nativeArchitectures(synthesized.assetDir(fn)).size]).toEqual([handler, 0]);
      // Nor their JavaScript bundled in (a chunk that loads sharp or ffmpeg without the binaries fails in AWS).
      expect([handler, bundledMediaModules(synthesized.assetDir(fn))]).toEqual([handler, []]);
    }
  });

  it('grants bedrock:InvokeModel on exactly the models the deployment allows', () => {
    const ai = synthesized.statements(stack.functions.get('workers/ai')!).filter((st) => actionsOf(st).some((a) => a.startsWith('bedrock:')));
    expect(ai.flatMap(actionsOf)).toEqual(['bedrock:InvokeModel']);
    const resources = ai.flatMap((st) => [st.Resource].flat()).map((r) => JSON.stringify(r));
    expect(resources).toEqual([
      expect.stringMatching(/":bedrock:",\{"Ref":"AWS::Region"\},"::foundation-model\/amazon\.nova-micro-v1:0"/),
      expect.stringMatching(/":bedrock:",\{"Ref":"AWS::Region"\},":",\{"Ref":"AWS::AccountId"\},":inference-profile\/eu\.anthropic\.claude-3-haiku-20240307-v1:0"/),
      expect.stringMatching(/":bedrock:\*::foundation-model\/anthropic\.claude-3-haiku-20240307-v1:0"/),
    ]);
  });

  it('creates the upstream secret with a random app secret and verify token, and the token as the unset marker', () => {
    const secret = synthesized.resource(upstreamSecret).Properties.GenerateSecretString;
    expect(secret.GenerateStringKey).toBe('appSecret');
    expect(secret.PasswordLength).toBeGreaterThanOrEqual(32);
    // The template as CloudFormation will see it, references shown as <LogicalId>.
    const parts: unknown[] = secret.SecretStringTemplate['Fn::Join'][1];
    const shape = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : `<${(p as { Ref: string }).Ref}>`)).join(''));
    // The verify token is the seed secret's generated value, resolved by CloudFormation at deploy; no app secret is written.
    expect(shape).toEqual({ token: UNSET_TOKEN, verifyToken: `{{resolve:secretsmanager:<${id(stack.resources.verifyTokenSeed)}>:SecretString:::}}` });
    expect(synthesized.resource(stack.resources.verifyTokenSeed).Properties.GenerateSecretString.PasswordLength).toBeGreaterThanOrEqual(32);
  });

  it('runs the outbox sweep every minute', () => {
    expect(scheduled).toContainEqual(expect.objectContaining({ handler: 'scheduled/outbox-sweep', everyMinutes: 1 }));
    for (const { handler, everyMinutes } of scheduled) {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: everyMinutes === 1 ? 'rate(1 minute)' : `rate(${everyMinutes} minutes)`,
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [id(stack.functions.get(handler)!), 'Arn'] } })],
      });
    }
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
        for (const action of [statement.Action].flat()) expect(action).not.toMatch(/^(\*|dynamodb:\*|s3:\*|sqs:\*|bedrock:\*|secretsmanager:\*)$/);
      }
    }
  });

  it('stays under CloudFormation\'s 500-resource limit', () => {
    expect(Object.keys(template.toJSON().Resources).length).toBeLessThan(450);
  });

  it('passes the cdk-nag AwsSolutions and Serverless packs (every acknowledgement carries a reason)', () => {
    // Synthesis fails when a plugin reports a violation that is not acknowledged.
    expect(() => app.synth({ force: true })).not.toThrow();
  });

  it('would fail synthesis on an unexplained cdk-nag finding (the check above can fail)', () => {
    const bad = nagApp();
    const badStack = new Stack(bad, 'Bad');
    new s3.Bucket(badStack, 'Open', { enforceSSL: false });
    expect(() => bad.synth()).toThrow(/AwsSolutions-S1|AwsSolutions-S10|server access logs|SSL/i);
  });

  describe('SAM (npm run sam:env)', () => {
    const local: LocalStack = {
      host: 'host.docker.internal', dynamodbPort: 8000, s3Port: 4569, sandboxPort: 3001,
      sqsEndpoint: 'http://host.docker.internal:9324', secretsManagerEndpoint: 'http://host.docker.internal:9325', schedulerEndpoint: 'http://host.docker.internal:9326',
      tableName: 'wa-crm', bucket: 'wa-crm-media', upstreamSecretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:wa-crm/upstream', businessSecretsPrefix: 'wa-crm/business-token/',
    };
    const { envVars, samTemplate } = samEnvironment(template.toJSON() as any, local);

    it.each(handlers.map((h) => [h]))('%s: every variable of the template has a local value, and the SAM template declares each one', (handler) => {
      const fn = stack.functions.get(handler)!;
      const values = envVars[id(fn)];
      expect(values).toMatchObject({ DYNAMODB_ENDPOINT: 'http://host.docker.internal:8000', S3_ENDPOINT: 'http://host.docker.internal:4569', UPSTREAM_BASE_URL: 'http://host.docker.internal:3001', AWS_ENDPOINT_URL_SQS: local.sqsEndpoint });
      for (const name of Object.keys(synthesized.environment(fn))) expect([name, values[name]]).toEqual([name, expect.stringMatching(/./)]);
      const needs = stack.needs.get(handler)!;
      if (needs.table) expect(values.TABLE_NAME).toBe('wa-crm');
      for (const queue of needs.queues) expect(values[queueUrlSetting(queue)]).toBe(`${local.sqsEndpoint}/000000000000/${queue}`);
      const samFunction = samTemplate.Resources[id(fn)];
      expect(Object.keys(samFunction.Properties.Environment.Variables).sort()).toEqual(Object.keys(values).sort());
      expect(samFunction.Metadata).toEqual(synthesized.resource(fn).Metadata);
    });

    it('is an npm script', () => {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
      expect(pkg.scripts['sam:env']).toBe('tsx infra/sam/env.ts');
    });
  });
});
