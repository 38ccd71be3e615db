// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';
import globals from 'globals';
import { noImportCycle } from './eslint-rules/no-import-cycle.js';

/**
 * Layers of DESIGN.md ("Dependency direction"). The order matters: the first matching pattern wins, so
 * `src/host/api.ts` is its own element before the rest of `src/host`.
 */
const elements = [
  { type: 'money', pattern: 'src/money/**' },
  { type: 'vocabulary', pattern: 'src/vocabulary/**' },
  { type: 'emv', pattern: 'src/emv/**' },
  { type: 'log', pattern: 'src/log/**' },
  { type: 'config', pattern: 'src/config/**' },
  { type: 'i18n', pattern: 'src/i18n/**' },
  { type: 'gateway', pattern: 'src/gateway/**' },
  { type: 'journal', pattern: 'src/journal/**' },
  { type: 'flows', pattern: 'src/flows/**' },
  { type: 'fleet', pattern: 'src/fleet/**' },
  { type: 'host-api', pattern: 'src/host/api.ts', mode: 'full' },
  { type: 'host', pattern: 'src/host/**' },
  { type: 'sandbox', pattern: 'src/sandbox/**' },
  { type: 'cli', pattern: 'src/cli/**' },
  { type: 'devices', pattern: 'devices/**' },
  { type: 'main', pattern: 'main/**' },
  { type: 'renderer', pattern: 'renderer/**' },
  { type: 'certification-runner', pattern: ['certification/runner/**', 'certification/pack/**'] },
  { type: 'certification', pattern: 'certification/**' },
  { type: 'bench', pattern: 'bench/**' },
  { type: 'test', pattern: 'test/**' },
].map((e) => ({ mode: 'full', ...e }));

const below = ['money', 'emv', 'log', 'config', 'vocabulary'];
const dependencyRules = [
  { from: 'money', allow: [] },
  // The service vocabulary (names, comments, money-moving set, recovery plan) is written once, below everything
  // that speaks to the gateway; the sandbox keeps its own copy on purpose.
  { from: 'vocabulary', allow: [] },
  { from: 'emv', allow: [] },
  { from: 'log', allow: ['emv'] },
  // i18n: a locale in the configuration is one the catalogues have (src/i18n/locales.ts, which imports nothing).
  // vocabulary: the rule of a text that shows as something, for the receipt texts configured (src/vocabulary/printed-text.ts).
  { from: 'config', allow: ['money', 'emv', 'i18n', 'vocabulary'] },
  // The customer texts: catalogues, translator, amount/duration formatting; only money's formatter below it.
  { from: 'i18n', allow: ['money'] },
  { from: 'devices', allow: ['money', 'emv', 'log'] },
  // gateway, journal and flows never import each other: the host wires them through their interfaces.
  { from: 'gateway', allow: below },
  { from: 'journal', allow: below },
  { from: 'flows', allow: [...below, 'i18n'] },
  // The MQTT fleet link: configuration and logs only; it reaches the terminal through the FleetTerminal interface the
  // host implements (src/host/fleet-terminal.ts).
  { from: 'fleet', allow: ['config', 'log'] },
  { from: 'host-api', allow: ['money', 'emv'] },
  {
    from: 'host',
    allow: [...below, 'i18n', 'gateway', 'journal', 'flows', 'devices', 'sandbox', 'host-api', 'fleet'],
  },
  // The sandbox is an independent server: it must never share request-building or signing code with the client.
  { from: 'sandbox', allow: ['money', 'emv', 'log'] },
  { from: 'certification', allow: ['money', 'emv', 'vocabulary', 'gateway', 'config', 'log'] },
  // The runner drives the real stack through the host, the way `simulate` does (DESIGN.md); the rules cannot reach
  // it, so a request builder's bug cannot hide in the validator.
  {
    from: 'certification-runner',
    allow: [
      'money',
      'emv',
      'vocabulary',
      'gateway',
      'config',
      'log',
      'certification',
      'host',
      'host-api',
      'sandbox',
      'devices',
    ],
  },
  { from: 'main', allow: ['host', 'host-api', 'config', 'log', 'money'] },
  { from: 'renderer', allow: ['host-api', 'money'] },
  // `start` asks main/ whether the Electron binary is installed before it spawns the kiosk window.
  {
    from: 'cli',
    allow: [
      ...below,
      'i18n',
      'gateway',
      'journal',
      'flows',
      'fleet',
      'devices',
      'sandbox',
      'host',
      'host-api',
      'certification',
      'certification-runner',
      'bench',
      'main',
    ],
  },
  {
    from: 'bench',
    allow: [
      ...below,
      'fleet',
      'gateway',
      'journal',
      'flows',
      'devices',
      'sandbox',
      'host',
      'host-api',
      'certification',
      'certification-runner',
    ],
  },
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', 'certification/reports/**', '**/*.d.ts', 'var/**', '.tmp/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['eslint.config.js', 'eslint-rules/*.js', 'bin/*.js'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: {
      // No import cycle anywhere, type-only imports included (eslint-rules/no-import-cycle.js says why).
      'local/no-import-cycle': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    ignores: ['**/*.test.ts', 'test/**'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': elements,
      'boundaries/include': [
        'src/**',
        'devices/**',
        'main/**',
        'renderer/**',
        'certification/**',
        'bench/**',
      ],
      'import/resolver': {
        typescript: {
          alwaysTryTypes: true,
          project: ['tsconfig.json', 'renderer/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        },
      },
    },
    rules: {
      // Every layer may import itself; the rules above say what else.
      'boundaries/element-types': [
        'error',
        {
          default: 'disallow',
          rules: dependencyRules.map((r) => ({ from: r.from, allow: [r.from, ...r.allow] })),
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
