import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'examples/**/assets/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'error',
    },
  },
  {
    // Only the command layer, the output host and scripts may write to the terminal.
    files: [
      'src/commands/**',
      'src/tasks/**',
      'src/cli.ts',
      'bin/**',
      'scripts/**',
      'bench/**',
      'test/**',
    ],
    rules: { 'no-console': 'off' },
  },
);
