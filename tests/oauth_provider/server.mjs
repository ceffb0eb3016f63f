// A real OpenID-certified authorisation server (oidc-provider) for the tests, on 127.0.0.1 and a free port.
// Its argument is a JSON object: {"clients": [...oidc-provider client metadata], "accessTokenTTL": seconds}.
// Its first line on stdout is {"issuer": "http://127.0.0.1:PORT"}; every later line is its own log as JSON: each
// grant, each revocation and each call of the userinfo endpoint (/me) with the account whose token it was.
import http from 'node:http';
import Provider from 'oidc-provider';

const options = JSON.parse(process.argv[2] || '{}');
const log = (entry) => process.stdout.write(`${JSON.stringify(entry)}\n`);
const server = http.createServer();

server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: options.clients || [],
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', 'profile'],
    claims: { openid: ['sub'], profile: ['name'] },
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    ttl: { AccessToken: options.accessTokenTTL || 3600, AuthorizationCode: 120, RefreshToken: 86400, Grant: 86400 },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, name: `person ${id}` }) }),
    cookies: { keys: ['agent-runtime-tests'] },
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc && ctx.oidc.route === 'userinfo') {
      log({ event: 'userinfo', status: ctx.status, account: ctx.oidc.account ? ctx.oidc.account.accountId : null });
    }
    if (ctx.oidc && ctx.oidc.route === 'token') {
      log({ event: 'token', status: ctx.status, grant_type: ctx.oidc.params && ctx.oidc.params.grant_type });
    }
  });
  provider.on('grant.success', (ctx) => log({ event: 'grant.success', account: ctx.oidc.account ? ctx.oidc.account.accountId : null }));
  provider.on('grant.revoked', (ctx, grantId) => log({ event: 'grant.revoked', grant: grantId }));
  provider.on('server_error', (ctx, error) => log({ event: 'server_error', error: String(error) }));
  server.on('request', provider.callback());
  log({ issuer });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
