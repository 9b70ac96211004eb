import { usePageTitle } from '../components/PageTitle';
import { Link } from '../router';

export function NotFound() {
  usePageTitle('Page not found');
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is nothing at this address. Go to your <Link to="/keys">API keys</Link>.
      </p>
    </>
  );
}
