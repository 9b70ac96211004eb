import type { User } from '../session';

export function NotPartner({ user, onSignOut }: { user: User; onSignOut: () => void }) {
  return (
    <main id="main" className="signin">
      <div className="card signin-card">
        <p className="brand">Partner developer portal</p>
        <h1 tabIndex={-1}>This account is not a partner</h1>
        <p>
          You are signed in as <strong>{user.phone}</strong>, {user.role === 'ADMIN' ? 'an operator' : 'a customer'} account. The
          developer portal is only for the accounts of delivery partners.
        </p>
        <p>If your company is a partner, ask its operator to add this phone number to the partner, then sign in again.</p>
        <button type="button" className="primary" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </main>
  );
}
