/**
 * The environment the synthesized template gives each function, with CloudFormation's references resolved to the
 * resources that stand in for them on this machine. This is how the deployed-mode tests start a function: from what
 * `cdk deploy` would configure, not from the local runtime's defaults.
 *
 * Resolution is strict: a reference to a resource type nobody stands in for, or an intrinsic function this file does
 * not know, is an error (a function the template configures in a way the tests cannot reproduce must not be started
 * with a guess).
 */

export interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties?: any; Metadata?: Record<string, unknown> }>;
}

/** How a resource of the template is reached locally: its `Ref` and its `Fn::GetAtt` attributes. */
export interface LocalResource {
  ref: string;
  attributes?: Record<string, string>;
}

export interface LocalEnvironment {
  region: string;
  accountId: string;
  /** Local stand-in per logical id of the template. */
  resources: Record<string, LocalResource>;
}

const pseudo = (name: string, env: LocalEnvironment): string => {
  switch (name) {
    case 'AWS::Region': return env.region;
    case 'AWS::AccountId': return env.accountId;
    case 'AWS::Partition': return 'aws';
    case 'AWS::URLSuffix': return 'amazonaws.com';
    default: throw new Error(`template-env: no local value for pseudo parameter ${name}`);
  }
};

/** One value of the template (a string or an intrinsic function) as a plain string. */
export function resolveValue(value: unknown, template: CfnTemplate, env: LocalEnvironment): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value && typeof value === 'object') {
    const [fn, arg] = Object.entries(value)[0] ?? [];
    const resource = (id: string) => {
      const local = env.resources[id];
      if (!local) throw new Error(`template-env: no local stand-in for ${id} (${template.Resources[id]?.Type ?? 'unknown resource'})`);
      return local;
    };
    switch (fn) {
      case 'Ref':
        return String(arg).startsWith('AWS::') ? pseudo(String(arg), env) : resource(String(arg)).ref;
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(arg) ? arg : String(arg).split('.');
        const got = resource(id).attributes?.[attribute];
        if (got === undefined) throw new Error(`template-env: no local value for ${id}.${attribute}`);
        return got;
      }
      case 'Fn::Join': {
        const [separator, parts] = arg as [string, unknown[]];
        return parts.map((p) => resolveValue(p, template, env)).join(separator);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [number, unknown[]];
        return resolveValue(list[index], template, env);
      }
      case 'Fn::Sub': {
        const [text, vars = {}] = typeof arg === 'string' ? [arg, {}] : (arg as [string, Record<string, unknown>]);
        return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
          if (name in vars) return resolveValue(vars[name], template, env);
          if (name.startsWith('AWS::')) return pseudo(name, env);
          const [id, attribute] = name.split('.');
          return attribute ? resolveValue({ 'Fn::GetAtt': [id, attribute] }, template, env) : resolveValue({ Ref: id }, template, env);
        });
      }
    }
  }
  throw new Error(`template-env: cannot resolve ${JSON.stringify(value)}`);
}

export interface TemplateFunction {
  logicalId: string;
  environment: Record<string, string>;
  timeoutSeconds: number;
  memoryMb: number;
}

/** Every Lambda function of the template with its environment resolved, by logical id. */
export function templateFunctions(template: CfnTemplate, env: LocalEnvironment): Map<string, TemplateFunction> {
  const out = new Map<string, TemplateFunction>();
  for (const [logicalId, r] of Object.entries(template.Resources)) {
    if (r.Type !== 'AWS::Lambda::Function' || !r.Properties?.Runtime?.startsWith('nodejs')) continue;
    const vars: Record<string, unknown> = r.Properties.Environment?.Variables ?? {};
    out.set(logicalId, {
      logicalId,
      environment: Object.fromEntries(Object.entries(vars).map(([k, val]) => [k, resolveValue(val, template, env)])),
      timeoutSeconds: r.Properties.Timeout ?? 3,
      memoryMb: r.Properties.MemorySize ?? 128,
    });
  }
  return out;
}
