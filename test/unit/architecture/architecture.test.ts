/**
 * The house rules of .dependency-cruiser.cjs hold for the service code: no import cycles (type-only imports
 * included) and layers that point one way (shared/ below functions/ and infra/). The fixture proves the rules bite:
 * a type-only cycle and a shared file importing a handler are both reported.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const run = promisify(execFile);

interface Violation { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }

const cruise = async (cwd: string, paths: string[]): Promise<Violation[]> => {
  const { stdout } = await run(process.execPath, [join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs'), ...paths, '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err) => err as { stdout: string });
  return JSON.parse(stdout).summary.violations as Violation[];
};

const describeViolation = (v: Violation) => `${v.rule.name}: ${v.from} → ${v.cycle?.map((c) => c.name).join(' → ') ?? v.to}`;

describe('architecture', () => {
  it('has no import cycle and no import from shared/ into functions/ or infra/', async () => {
    const violations = await cruise(root, ['shared', 'functions', 'infra']);
    expect(violations.map(describeViolation)).toEqual([]);
  }, 120_000);

  it('reports a type-only cycle and a shared file importing a handler (the rules bite)', async () => {
    const violations = await cruise(join(root, 'test/unit/architecture/fixtures'), ['shared', 'functions']);
    const rules = violations.map((v) => v.rule.name);
    expect(rules).toContain('no-cycles');
    expect(rules).toContain('shared-is-the-bottom-layer');
  }, 120_000);
});
