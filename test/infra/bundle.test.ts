/**
 * The bundler as the CDK CLI drives it: the CLI gives the app a relative cloud assembly directory
 * (`CDK_OUTDIR=cdk.out`), so `cdk synth` and `cdk deploy` bundle into a relative path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleFunctions } from '#infra/bundle.ts';

it('bundles into a relative output directory, as `cdk synth` asks', () => {
  // Prepare
  const dir = mkdtempSync(join(process.cwd(), '.bundle-test-'));
  try {
    // Act
    const bundles = bundleFunctions(process.cwd(), [{ handler: 'http/meta/openapi' }], relative(process.cwd(), dir), { write: false });

    // Assess
    expect(bundles.get('http/meta/openapi')?.dir).toBe(join(dir, 'http/meta/openapi'));
    expect(bundles.get('http/meta/openapi')?.inputs).toEqual(expect.arrayContaining(['functions/http/meta/openapi.ts']));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
