// Drives authflow with openid-client 6, unmodified: RFC 8414 discovery, authorization code
// with PKCE S256 and state, RFC 9207 `iss` check (done by authorizationCodeGrant), refresh.
//
// Usage: node openid_client_flow.mjs ISSUER CLIENT_ID CLIENT_SECRET AUTH REDIRECT_URI SCOPE
//   AUTH is post | basic | none (CLIENT_SECRET is ignored for none).
// Protocol on stdio, one JSON object per line:
//   out {"authorization_url": "..."}   the URL a browser should open
//   in  the callback URL the browser landed on (plain text line)
//   out {"metadata": {...}, "token": {...}, "refreshed": {...}}
// Any failure goes to stderr as {"error": name, "message", "code"?} and the exit status is 1.
import * as client from 'openid-client';
import { createInterface } from 'node:readline';

const [issuer, clientId, clientSecret, auth, redirectUri, scope] = process.argv.slice(2);

function clientAuth() {
  switch (auth) {
    case 'post': return client.ClientSecretPost(clientSecret);
    case 'basic': return client.ClientSecretBasic(clientSecret);
    case 'none': return client.None();
    default: throw new Error(`unknown AUTH ${auth}`);
  }
}

async function readLine() {
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    rl.close();
    return line.trim();
  }
  throw new Error('stdin closed before the callback URL arrived');
}

async function main() {
  const config = await client.discovery(
    new URL(issuer),
    clientId,
    auth === 'none' ? undefined : clientSecret,
    clientAuth(),
    { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
  );

  const codeVerifier = client.randomPKCECodeVerifier();
  const codeChallenge = await client.calculatePKCECodeChallenge(codeVerifier);
  const state = client.randomState();
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
    state,
  });
  process.stdout.write(JSON.stringify({ authorization_url: authorizationUrl.href }) + '\n');

  const callback = new URL(await readLine());
  const token = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
  });
  const refreshed = await client.refreshTokenGrant(config, token.refresh_token);
  process.stdout.write(JSON.stringify({
    metadata: config.serverMetadata(),
    state,
    token,
    refreshed,
  }) + '\n');
}

main().catch((err) => {
  process.stderr.write(JSON.stringify({
    error: err.name,
    message: err.message,
    code: err.code,
    // Error fields are not enumerable: copy the cause's so the test's failure says why.
    cause: err.cause ? { name: err.cause.name, message: err.cause.message, code: err.cause.code } : null,
  }) + '\n');
  process.exit(1);
});
