-- Accounts and sign-in.
-- When a user joined its partner: an operator may attach an existing customer account, whose
-- created_at is older, and a partner's users are listed in the order they joined it.
ALTER TABLE users ADD COLUMN partner_joined_at timestamptz;

-- Blocking an account revokes all of its refresh tokens.
CREATE INDEX refresh_tokens_user_idx ON refresh_tokens (user_id) WHERE revoked_at IS NULL;
