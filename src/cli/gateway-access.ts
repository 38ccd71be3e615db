import { gatewayUrlProblem, type Config } from '../config/index.js';
import { createGatewayClient, type GatewayClient } from '../gateway/index.js';
import { gatewayAuthFromConfig } from '../host/gateway-adapters.js';
import { createLogger, silentLogger, type Logger } from '../log/index.js';
import { UsageError } from './output.js';

/**
 * The gateway a command beside the terminal talks to: `--gateway URL`, else `gateway.baseUrl` of a remote gateway.
 * The embedded sandbox runs inside the terminal, so without a remote gateway the URL must be given (`missingCode`,
 * the command's own error code); a URL that does not parse is bad input.
 */
export function commandGatewayUrl(config: Config, option: string | undefined, missingCode: string): string {
  const baseUrl = option ?? (config.gateway.kind === 'remote' ? config.gateway.baseUrl : undefined);
  if (baseUrl === undefined)
    throw new UsageError(
      missingCode,
      'the embedded sandbox runs inside the terminal: pass --gateway URL (e.g. of `parking-terminal sandbox`)',
    );
  if (!URL.canParse(baseUrl)) throw new UsageError('BAD_ARGUMENTS', `--gateway: "${baseUrl}" is not a URL`);
  const problem = gatewayUrlProblem(baseUrl);
  if (problem !== undefined) throw new UsageError('BAD_ARGUMENTS', `--gateway: ${problem}`);
  return baseUrl;
}

/** A command's logger: the configured log file, or nothing (its output is the JSON document). */
export function commandLogger(config: Config): Logger {
  return config.log.file
    ? createLogger({ level: config.log.level, destination: config.log.file })
    : silentLogger();
}

/** The gateway client of the configuration (merchant, authentication, timeouts, retry) at `baseUrl`. */
export function connectConfiguredGateway(
  config: Config,
  options: { baseUrl: string; logger: Logger; cwd: string; now?: () => Date },
): GatewayClient {
  const { baseUrl, logger, cwd, now } = options;
  return createGatewayClient({
    baseUrl,
    merchantId: config.gateway.merchantId,
    auth: gatewayAuthFromConfig(config, { baseUrl, cwd, logger }).authenticator,
    timeouts: config.gateway.timeouts,
    retry: config.gateway.retry,
    logger,
    ...(now !== undefined ? { now } : {}),
    ...(config.links.hostedPageHosts !== undefined ? { hostedPageHosts: config.links.hostedPageHosts } : {}),
  });
}
