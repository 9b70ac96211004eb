/**
 * Spectral's OWASP API Security ruleset as this API is linted with it (docs/openapi.md, "OWASP
 * ruleset"): `npx spectral lint -r spectral-owasp.mjs <document>`, and the lint test in
 * src/modules/openapi/openapi-linters.e2e.test.ts. Every rule that does not fit is turned off here with its reason;
 * where a rule is kept for requests only, a rule of the same check scoped to requests replaces it.
 */
import { defined, schema } from '@stoplight/spectral-functions';
import owasp from '@stoplight/spectral-owasp-ruleset';

/** Where input enters: request bodies and parameters (path, query, header). */
const REQUEST_SCHEMAS = [
  '$.paths[*][*].requestBody.content[*].schema',
  '$.paths[*][*].parameters[*].schema',
  '$.paths[*].parameters[*].schema',
];
const inRequests = (filter) => REQUEST_SCHEMAS.flatMap((root) => [`${root}..[?(${filter})]`, `${root}[?(${filter})]`]);

export default {
  extends: [[owasp, 'all']],
  rules: {
    // Response fields are written by the service; their size follows from the limits of the requests
    // they came from (checked below, per request) and from the service's own caps (docs/openapi.md).
    'owasp:api4:2023-string-limit': 'off',
    'owasp:api4:2023-array-limit': 'off',
    'owasp:api4:2023-integer-limit-legacy': 'off',
    // The API is called server to server and by the same-origin portal: it sends no CORS headers.
    'owasp:api8:2023-define-cors-origin': 'off',
    // Developer, operator and sign-in routes have no per-request quota fields; partner routes declare theirs
    // on every answer sent after the key is known (partner-rate-limit-headers below).
    'owasp:api4:2023-rate-limit': 'off',
    // A query parameter `apiKeyId` is a key's public id (a UUID), not a credential.
    'owasp:api2:2023-no-credentials-in-url': 'off',
    // Operators and partners sign in the same way; the token's role (ADMIN) is what opens /v1/admin.
    'owasp:api5:2023-admin-security-unique': 'off',
    // Sign-in (/v1/auth: one-time codes, refresh) is how a token is obtained: it cannot require one.
    'owasp:api2:2023-write-restricted': 'off',

    'request-string-limit': {
      description: 'A request string must specify maxLength, enum, or const (owasp:api4:2023-string-limit).',
      message: 'Request string without maxLength, enum or const.',
      severity: 'error',
      given: inRequests('@ && @.type=="string"'),
      // biome-ignore lint/suspicious/noThenProperty: Spectral's rule format
      then: {
        function: schema,
        functionOptions: {
          schema: { type: 'object', anyOf: [{ required: ['maxLength'] }, { required: ['enum'] }, { required: ['const'] }] },
        },
      },
    },
    'request-array-limit': {
      description: 'A request array must specify maxItems (owasp:api4:2023-array-limit).',
      message: 'Request array without maxItems.',
      severity: 'error',
      given: inRequests('@ && @.type=="array"'),
      // biome-ignore lint/suspicious/noThenProperty: Spectral's rule format
      then: { field: 'maxItems', function: defined },
    },
    'request-integer-limit': {
      description: 'A request integer must specify minimum and maximum (owasp:api4:2023-integer-limit-legacy).',
      message: 'Request integer without {{property}}.',
      severity: 'error',
      given: inRequests('@ && @.type=="integer"'),
      // biome-ignore lint/suspicious/noThenProperty: Spectral's rule format
      then: [
        { field: 'minimum', function: defined },
        { field: 'maximum', function: defined },
      ],
    },
    'partner-rate-limit-headers': {
      description: 'Partner answers declare the RateLimit and RateLimit-Policy fields they carry.',
      message: 'Partner answer without {{property}}.',
      severity: 'error',
      given: "$.paths[?(@property.startsWith('/v1/partner/'))][*].responses[?(@property.match(/^(2..|400|404|409|429)$/))]",
      // biome-ignore lint/suspicious/noThenProperty: Spectral's rule format
      then: [
        { field: 'headers.RateLimit', function: defined },
        { field: 'headers.RateLimit-Policy', function: defined },
      ],
    },
  },
};
