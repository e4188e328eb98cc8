// @ts-check
import tseslint from 'typescript-eslint';

/** The domain core imports no AWS SDK, CDK or middy and reads no environment (style.md, "Where things live"). */
const PURE_CORE = [
  'lib/allocate.ts',
  'lib/candidates.ts',
  'lib/errors.ts',
  'lib/events.ts',
  'lib/ip.ts',
  'lib/kinds.ts',
  'lib/names.ts',
  'lib/objects.ts',
  'lib/openapi.ts',
  'lib/ranges.ts',
  'lib/records.ts',
  'lib/routes.ts',
  'lib/schemas.ts',
  'lib/spaces.ts',
  'lib/stream-filter.ts',
  'lib/table-schema.ts',
  'lib/validation.ts',
  'lib/values.ts',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'coverage/', '.allot-data/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: PURE_CORE,
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@aws-sdk/*', 'aws-cdk-lib', 'aws-cdk-lib/*', '@middy/*', 'constructs'] },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'env' }],
    },
  },
);
