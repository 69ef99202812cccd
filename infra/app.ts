/**
 * The CDK app. `npx cdk synth` works offline with no AWS credentials; `npx cdk deploy` deploys into the
 * account and region of the caller's credentials. cdk-nag's AwsSolutions and Serverless packs run on synth.
 */
import { App, Validations } from 'aws-cdk-lib';
// cdk-nag is CommonJS without static named exports.
import cdkNag from 'cdk-nag';
import { ServiceStack } from './stack.ts';
import { writeOpenApiDocument } from './openapi-document.ts';

const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;

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
