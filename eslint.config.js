// @ts-check
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/, lowest first (lib/README.md). A layer imports only the layers below it:
 * domain ← store ← service ← http ← cloud ← local, and cli beside cloud. `local` is the one composition
 * root inside lib/ (it runs the functions/ handlers in-process, with the cloud's stream filter); `cli`
 * speaks HTTP and needs only the domain.
 */
const LAYERS = ['domain', 'store', 'service', 'http', 'cloud'];
const TOP = ['local', 'cli'];
const AWS = ['@aws-sdk/*', 'aws-cdk-lib', 'aws-cdk-lib/*', '@middy/*', 'constructs'];

/** Import patterns (gitignore syntax, matched against the specifier) a layer must not use. */
function above(layer) {
  const higher = [...LAYERS.slice(LAYERS.indexOf(layer) + 1), ...TOP];
  return [
    ...higher.flatMap((name) => [`../${name}/*`, `../../${name}/*`, `../../../${name}/*`]),
    '**/functions/*',
    '**/bin/*',
  ];
}

/**
 * Plain data and pure functions outside lib/domain that the CDK construct, the local server and the tests
 * read alike: no AWS SDK, CDK or middy, no environment.
 */
const PURE_FILES = {
  store: ['lib/store/schema.ts', 'lib/store/keys.ts'],
  http: ['lib/http/routes.ts', 'lib/http/openapi/openapi.ts'],
  cloud: ['lib/cloud/stream-filter.ts', 'lib/cloud/stream-mapping.ts', 'lib/cloud/requests.ts'],
};

function layerRule(layer, files, pure) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: above(layer),
              message: `lib/${layer} may import only the layers below it (domain ← store ← service ← http ← cloud).`,
            },
            ...(pure
              ? [{ group: AWS, message: `${files.join(', ')}: pure, no AWS SDK, CDK or middy.` }]
              : []),
          ],
        },
      ],
      ...(pure ? { 'no-restricted-properties': ['error', { object: 'process', property: 'env' }] } : {}),
    },
  };
}

const layerRules = LAYERS.flatMap((layer) => [
  layerRule(layer, [`lib/${layer}/**/*.ts`], layer === 'domain'),
  ...(PURE_FILES[layer] ? [layerRule(layer, PURE_FILES[layer], true)] : []),
]);

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'coverage/', '.allot-data/', 'dist/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules,
  {
    // The console is a client of the HTTP API too: its page talks to the API only over HTTP.
    files: ['lib/console/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/store/*',
                '**/service/*',
                '**/http/*',
                '**/cloud/*',
                '**/local/*',
                '**/cli/*',
                '**/functions/*',
              ],
              message: 'lib/console is a client of the HTTP API: it imports no layer of the server.',
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI talks to the API over HTTP: it needs the domain's vocabulary, nothing of the service.
    files: ['lib/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '../store/*',
                '../service/*',
                '../http/*',
                '../cloud/*',
                '../local/*',
                '**/functions/*',
              ],
              message: 'lib/cli is a client of the HTTP API: it imports only lib/domain.',
            },
          ],
        },
      ],
    },
  },
);
