/**
 * The CDK app. `npx cdk synth` works offline with no AWS credentials; `npx cdk deploy` deploys into the
 * account and region of the caller's credentials. cdk-nag's AwsSolutions and Serverless packs run on synth.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
// cdk-nag is CommonJS without static named exports.
import cdkNag from 'cdk-nag';
import { ServiceStack } from './stack.ts';

const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;

/** The OpenAPI document, built from the handler modules' own schemas and shipped with the meta functions. */
async function writeOpenApiDocument(): Promise<string> {
  const { buildOpenApi, loadSpecs } = await import('../shared/openapi/document.ts');
  const doc = buildOpenApi(await loadSpecs((handler) => import(`../functions/${handler}.ts`)));
  const path = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
new ServiceStack(app, app.node.tryGetContext('stackName') ?? 'WaCrmService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  upstreamApiVersion: app.node.tryGetContext('upstreamApiVersion'),
  // `-c aiModels=amazon.nova-lite-v1:0,amazon.nova-pro-v1:0`: the Bedrock models a business may choose (first = default).
  aiModels: String(app.node.tryGetContext('aiModels') ?? '').split(',').map((m) => m.trim()).filter(Boolean),
  openApiDocumentPath: await writeOpenApiDocument(),
});
app.synth();
