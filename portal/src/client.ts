/**
 * The portal's one API client: the SDK's developer client at this origin, signing its requests with the
 * session's tokens (session.ts). Sign-in, sign-out, and what the SDK answers as an error turned into the
 * error a screen shows.
 */
import { createDeveloperClient, PartnerApiError } from '@partner-logistics/sdk/developer';
import { createSessionAuth, endSession, getSession, startSession, type User } from './session';

const auth = createSessionAuth((refreshToken) => developer.POST('/v1/auth/refresh', { body: { refreshToken } }));

export const developer = createDeveloperClient({ baseUrl: window.location.origin, auth, retry: false });

export const { refreshSession, freshAccessToken } = auth;

export function requestCode(phone: string) {
  return developer.requestCode(phone);
}

export async function verifyCode(phone: string, code: string): Promise<User> {
  const pair = await developer.verifyCode(phone, code);
  startSession(pair);
  return pair.user;
}

/** Ends the session here at once, then tells the server (best effort: a 404 or an outage is fine). */
export async function signOut(): Promise<void> {
  const refreshToken = getSession()?.refreshToken;
  endSession('user');
  if (refreshToken) await developer.POST('/v1/auth/logout', { body: { refreshToken } }).catch(() => undefined);
}

/** Any failure as the PartnerApiError a screen shows (a bug in the portal itself is ERR_CLIENT). */
export function toApiError(err: unknown): PartnerApiError {
  if (err instanceof PartnerApiError) return err;
  return new PartnerApiError({
    status: 0,
    code: 'ERR_CLIENT',
    message: err instanceof Error ? err.message : 'Something went wrong.',
    method: '',
    url: '',
  });
}
