/**
 * The portal shell: who is signed in decides between the sign-in page, the "not a partner" page and
 * the portal itself; the path decides the screen.
 */
import { type ReactNode, useEffect, useRef, useSyncExternalStore } from 'react';
import { signOut } from './client';
import { Link, match, navigate, usePath } from './router';
import { Deliveries } from './screens/Deliveries';
import { DeliveryDetail } from './screens/DeliveryDetail';
import { Docs } from './screens/Docs';
import { EventCatalog } from './screens/EventCatalog';
import { KeyDetail } from './screens/KeyDetail';
import { Keys } from './screens/Keys';
import { NotFound } from './screens/NotFound';
import { NotPartner } from './screens/NotPartner';
import { Offers } from './screens/Offers';
import { OrderPage } from './screens/OrderPage';
import { PaymentStatement } from './screens/PaymentStatement';
import { Payments } from './screens/Payments';
import { RequestDetail } from './screens/RequestDetail';
import { Requests } from './screens/Requests';
import { Sandbox } from './screens/Sandbox';
import { SignIn } from './screens/SignIn';
import { UsageOverview } from './screens/UsageOverview';
import { Webhooks } from './screens/Webhooks';
import type { User } from './session';
import { getSession, onSessionChange } from './session';

const NAV = [
  { to: '/keys', label: 'API keys' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/offers', label: 'Offers' },
  { to: '/events', label: 'Events' },
  { to: '/usage', label: 'Usage' },
  { to: '/requests', label: 'Requests' },
  { to: '/payments', label: 'Payments' },
  { to: '/sandbox', label: 'Sandbox' },
  { to: '/docs', label: 'Docs' },
];

function screenFor(path: string): ReactNode {
  if (path === '/keys') return <Keys />;
  const key = match('/keys/:id', path);
  if (key) return <KeyDetail key={key.id} keyId={key.id} />;
  if (path === '/webhooks') return <Webhooks />;
  const webhook = match('/webhooks/:id', path);
  if (webhook) return <Deliveries key={webhook.id} webhookId={webhook.id} />;
  const delivery = match('/deliveries/:id', path);
  if (delivery) return <DeliveryDetail key={delivery.id} deliveryId={delivery.id} />;
  if (path === '/offers') return <Offers />;
  if (path === '/events') return <EventCatalog />;
  if (path === '/usage') return <UsageOverview />;
  if (path === '/requests') return <Requests />;
  const request = match('/requests/:id', path);
  if (request) return <RequestDetail key={request.id} requestId={request.id} />;
  if (path === '/payments') return <Payments />;
  const statement = match('/payments/settlements/:id', path);
  if (statement) return <PaymentStatement key={statement.id} settlementId={statement.id} />;
  if (path === '/sandbox') return <Sandbox />;
  if (path === '/docs') return <Docs />;
  // `/orders/<code>/proof` is where the order page used to be: links to it keep working.
  const order = match('/orders/:code', path) ?? match('/orders/:code/proof', path);
  if (order) return <OrderPage key={order.code} code={order.code} />;
  return <NotFound />;
}

export function App() {
  const session = useSyncExternalStore(onSessionChange, getSession);
  const path = usePath();
  // Signed in during this page's life (not restored on load): focus starts on the new page's heading.
  const signedInHere = useRef(session === null);
  if (session === null) signedInHere.current = true;

  useEffect(() => {
    if (session && path === '/') navigate('/keys', { replace: true });
  }, [session, path]);

  if (!session) return <SignIn />;
  if (session.user.role !== 'PARTNER') return <NotPartner user={session.user} onSignOut={() => void signOut()} />;
  return <Shell user={session.user} path={path} focusOnMount={signedInHere.current} />;
}

function Shell({ user, path, focusOnMount }: { user: User; path: string; focusOnMount: boolean }) {
  const first = useRef(true);

  // After an in-app navigation (or signing in), move focus to the new page's heading so screen readers
  // announce it. A page load leaves focus alone, so the first Tab reaches the skip link.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every path change
  useEffect(() => {
    const initial = first.current;
    first.current = false;
    if (initial && !focusOnMount) return;
    document.querySelector<HTMLElement>('main h1')?.focus();
    if (!initial) window.scrollTo(0, 0);
  }, [path]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to="/keys" className="brand">
            Developer portal
          </Link>
          <p className="who">
            <span className="who-partner" data-testid="partner-name">
              {user.partnerName ?? 'Partner'}
            </span>
            <span className="who-phone">{user.phone}</span>
          </p>
          <button type="button" className="signout" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
        <nav aria-label="Main" className="nav">
          <ul>
            {NAV.map((item) => {
              const current = path === item.to || path.startsWith(`${item.to}/`);
              return (
                <li key={item.to}>
                  <Link to={item.to} aria-current={current ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {screenFor(path)}
      </main>
    </>
  );
}
