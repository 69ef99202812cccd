/**
 * The house rules, checked by test/unit/architecture.test.ts (dependency-cruiser): no import cycles (type-only
 * imports included), and layers that point one way: functions/ and infra/ build on shared/, never the reverse;
 * service code never imports the local runtime or the tests.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Files that import each other (also through type-only imports): one of them owns a type or a step that belongs lower.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-is-the-bottom-layer',
      severity: 'error',
      comment: 'Library code (shared/) must not depend on handlers (functions/) or on the CDK app and local runtime (infra/).',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra)/' },
    },
    {
      name: 'functions-do-not-use-infra',
      severity: 'error',
      comment: 'A Lambda handler runs the same code locally and in AWS: it never imports the CDK app or the local runtime.',
      from: { path: '^functions/' },
      to: { path: '^infra/' },
    },
    {
      name: 'no-tests-in-service-code',
      severity: 'error',
      from: { path: '^(shared|functions|infra)/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules' },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: require('node:path').join(__dirname, 'tsconfig.json') },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
