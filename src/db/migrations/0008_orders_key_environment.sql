-- Orders: an order can only be assigned to a key of its own environment, enforced by the database.
--
-- The service already refuses such an assignment (ERR_VALIDATION on POST /v1/admin/orders/{code}/assign),
-- and a rotation moves orders to a key of the same environment. The partner list of a key now relies on
-- it: it filters by the key (the index it must use) and checks the key's environment once, instead of
-- filtering every order by environment as well, which let a generic plan read a small key's page through
-- the whole environment's index (query-plans.test.ts). This trigger makes the rule hold for every writer,
-- plain SQL included.
CREATE FUNCTION orders_check_key_environment() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.assigned_key_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = NEW.assigned_key_id AND k.environment = NEW.environment) THEN
    RAISE EXCEPTION 'order % (%) cannot be assigned to a key of another environment', NEW.code, NEW.environment
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER orders_key_environment BEFORE INSERT OR UPDATE OF assigned_key_id, environment ON orders
  FOR EACH ROW EXECUTE FUNCTION orders_check_key_environment();
