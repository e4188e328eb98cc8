/**
 * What the Lambda bundles use in place of `@aws-sdk/credential-provider-node` (the construct aliases it
 * here): the SDK's default chain, less the links that cannot apply in Lambda. Lambda gives a function its
 * role's credentials in the environment (AWS_ACCESS_KEY_ID, …), the chain's first link, or where it does
 * not, at a container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI); the SSO, ini-file,
 * process, web-identity and instance-metadata links, with the STS and SSO clients they carry, weigh about
 * 130 KB per bundle and would never run. Same pinned SDK providers, same order; cached as the SDK's chain
 * caches, until five minutes before the credentials expire.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { fromHttp, type FromHttpOptions } from '@aws-sdk/credential-provider-http';

type Provider = ReturnType<typeof fromEnv>;
type Credentials = Awaited<ReturnType<Provider>>;

/** As the SDK's chain: credentials that expire within five minutes are fetched again. */
const REFRESH_BEFORE_MS = 300_000;

function fromContainer(init: FromHttpOptions): Provider | undefined {
  const { AWS_CONTAINER_CREDENTIALS_FULL_URI: full, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: relative } =
    process.env;
  return full || relative ? fromHttp(init) : undefined;
}

export function defaultProvider(init: FromHttpOptions = {}): Provider {
  let cached: Credentials | undefined;
  let pending: Promise<Credentials> | undefined;
  const resolve = async (): Promise<Credentials> => {
    try {
      return await fromEnv(init)();
    } catch (error) {
      const container = fromContainer(init);
      if (!container) throw error;
      return container();
    }
  };
  return async () => {
    const fresh =
      cached && (!cached.expiration || cached.expiration.getTime() - Date.now() > REFRESH_BEFORE_MS);
    if (fresh) return cached!;
    pending ??= resolve().finally(() => (pending = undefined));
    cached = await pending;
    return cached;
  };
}
