/**
 * One jest run covers unit, integration (DynamoDB Local, started once in globalSetup),
 * e2e (the local HTTP server) and infra (CDK assertions) tests. Sources are TypeScript ES modules,
 * transformed by esbuild and run as native ESM (hence --experimental-vm-modules in package.json).
 */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.cjs',
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/env.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
