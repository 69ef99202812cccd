/**
 * Reading the synthesized template per function: its properties, its role's policy statements, and the
 * directory of its asset in the cloud assembly. Shared by the infra tests.
 */
import { existsSync, readdirSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export const actionsOf = (st: Statement) => [st.Action].flat();

export class SynthesizedFunctions {
  private readonly resources: Record<string, any>;

  constructor(private readonly stack: Stack, template: Template, private readonly assemblyDir: string) {
    this.resources = template.toJSON().Resources;
  }

  logicalId(construct: { node: { defaultChild?: unknown } }): string {
    return this.stack.getLogicalId(construct.node.defaultChild as any);
  }

  resource(construct: { node: { defaultChild?: unknown } }) {
    return this.resources[this.logicalId(construct)];
  }

  /** Every statement of every IAM policy attached to the function's role. */
  statements(fn: { node: { defaultChild?: unknown } }): Statement[] {
    const roleRef = this.resource(fn).Properties.Role; // { 'Fn::GetAtt': [roleId, 'Arn'] }
    const roleId = roleRef['Fn::GetAtt'][0];
    return Object.values(this.resources)
      .filter((r: any) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((ref: any) => ref.Ref === roleId))
      .flatMap((r: any) => r.Properties.PolicyDocument.Statement as Statement[]);
  }

  environment(fn: { node: { defaultChild?: unknown } }): Record<string, unknown> {
    return this.resource(fn).Properties.Environment?.Variables ?? {};
  }

  /** The function's code directory in the cloud assembly, from the asset metadata SAM also reads. */
  assetDir(fn: { node: { defaultChild?: unknown } }): string {
    return join(this.assemblyDir, this.resource(fn).Metadata['aws:asset:path']);
  }
}

/** Whether `statements` allow `action` on a resource expression that mentions `logicalId` (Ref/GetAtt/Join). */
export const allows = (statements: Statement[], action: string, logicalId?: string) =>
  statements.some((st) => st.Effect === 'Allow' && actionsOf(st).includes(action) && (logicalId === undefined || JSON.stringify(st.Resource).includes(`"${logicalId}"`)));

/** ELF machine types of native binaries: what each architecture can load. */
const ELF_MACHINE: Record<number, string> = { 0x3e: 'x86_64', 0xb7: 'arm64' };

/** The architectures of every ELF file (native addon, shared library, executable) under `dir`. */
export function nativeArchitectures(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const header = Buffer.alloc(20);
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size >= 20) {
        const fd = openSync(path, 'r');
        readSync(fd, header, 0, 20, 0);
        closeSync(fd);
        if (header.readUInt32BE(0) === 0x7f454c46) found.set(path, ELF_MACHINE[header.readUInt16LE(18)] ?? `machine ${header.readUInt16LE(18)}`);
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}
