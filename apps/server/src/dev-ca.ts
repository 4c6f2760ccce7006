/**
 * The embedded default signer: when neither `--ca`/`--ca-key` nor a `default` signer is configured,
 * certsmith signs with a development CA (ECDSA P-256, self-signed) kept in `<data-dir>/dev-ca/`,
 * created on first start and reused afterwards, so `certsmith serve` with no flags can issue at once.
 * It is logged as development-only on every start.
 */
import { createDevelopmentCa, localSignerPlugin } from '@certsmith/signer-local';
import type { Logger } from '@certsmith/http-api';
import { LOCAL_SIGNER_MODULE, loadSigner } from './signer-loader.js';
import type { LoadedSigner } from './signer-loader.js';

/** Load (creating on first use) the development CA under `dataDir` as the `default` signer. */
export async function loadDevelopmentSigner(dataDir: string, logger: Logger): Promise<LoadedSigner> {
  const ca = await createDevelopmentCa(dataDir);
  const loaded = await loadSigner({
    label: 'default',
    plugin: localSignerPlugin,
    describedAs: '@certsmith/signer-local (development CA)',
    pluginModule: LOCAL_SIGNER_MODULE,
    options: { certFile: ca.certFile, keyFile: ca.keyFile },
    configDir: dataDir,
    logger,
    where: 'the development CA',
  });
  logger.warn(
    { certFile: ca.certFile, created: ca.created },
    'no CA configured: signing with the development CA (ECDSA P-256) — for development only; give --ca/--ca-key or a "default" signer in --config for production',
  );
  return loaded;
}
