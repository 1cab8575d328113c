-- Sample rows for schema.sql + view.sql, relative to now() so that they fall
-- in callscope's window whenever they are loaded. Each row is written the way
-- Powertools would: id = function || '#' || md5(key), expiration = created +
-- 3600 s (Powertools' default expires_after_seconds), in_progress_expiration
-- = created + the function's timeout, in milliseconds, validation = md5 of
-- the payload. What callscope should make of them (stuck_after = 5m,
-- key_rotation_window = 2h):
--   ProcessPayment, keys k-1001-a and k-1001-b: the same payment 8 s apart,
--        both COMPLETED                                   -> key_rotation
--        (critical: executed under 2 keys)
--   SendReceipt, the same payload in another function     -> nothing
--   ProcessPayment k-1003: INPROGRESS for 15 min, its 30 s lock long lapsed
--                                                         -> stuck_processing
--   ProcessPayment k-1004: EXPIRED with a response        -> SUCCESS, nothing
--   ProcessPayment k-1005: EXPIRED without a response, marked 10 min ago
--                                                         -> stuck_processing
--   RefundPayment k-2001: no payload validation           -> digest = key hash
--   ProcessPayment k-1006: under way for 10 s             -> PROCESSING, nothing
-- updated_at is given because these rows stand for records written earlier;
-- the application itself never sets it (the DEFAULT and the trigger do).

INSERT INTO idempotency
  (id, expiration, in_progress_expiration, status, data, validation, created_at, updated_at)
SELECT s.fn || '#' || md5(s.idem_key),
       extract(epoch FROM s.created)::bigint + 3600,
       (extract(epoch FROM s.created) * 1000)::bigint + 30000,
       s.status, s.data, md5(s.payload), s.created, s.written
FROM (VALUES
  ('orders-ProcessPayment.app.lambda_handler', '"k-1001-a"',
   now() - interval '30 minutes', now() - interval '30 minutes' + interval '2 seconds',
   'COMPLETED', '{"statusCode": 201, "body": "{\"payment\": \"pay_7Hq2\"}"}',
   '{"amount": 4200, "currency": "eur", "order": "ord-1001"}'),
  ('orders-ProcessPayment.app.lambda_handler', '"k-1001-b"',
   now() - interval '30 minutes' + interval '8 seconds',
   now() - interval '30 minutes' + interval '10 seconds',
   'COMPLETED', '{"statusCode": 201, "body": "{\"payment\": \"pay_9Kx4\"}"}',
   '{"amount": 4200, "currency": "eur", "order": "ord-1001"}'),
  ('orders-SendReceipt.app.lambda_handler', '"k-1001-a"',
   now() - interval '30 minutes' + interval '1 second',
   now() - interval '30 minutes' + interval '2 seconds',
   'COMPLETED', '{"statusCode": 200, "body": "{\"receipt\": \"rcpt_31\"}"}',
   '{"amount": 4200, "currency": "eur", "order": "ord-1001"}'),
  ('orders-ProcessPayment.app.lambda_handler', '"k-1003"',
   now() - interval '15 minutes', now() - interval '15 minutes',
   'INPROGRESS', NULL, '{"amount": 1999, "currency": "eur", "order": "ord-1003"}'),
  ('orders-ProcessPayment.app.lambda_handler', '"k-1004"',
   now() - interval '2 hours', now() - interval '10 minutes',
   'EXPIRED', '{"statusCode": 201, "body": "{\"payment\": \"pay_2Mn8\"}"}',
   '{"amount": 750, "currency": "eur", "order": "ord-1004"}'),
  ('orders-ProcessPayment.app.lambda_handler', '"k-1005"',
   now() - interval '2 hours', now() - interval '10 minutes',
   'EXPIRED', NULL, '{"amount": 12500, "currency": "eur", "order": "ord-1005"}'),
  ('orders-RefundPayment.app.lambda_handler', '"k-2001"',
   now() - interval '20 minutes', now() - interval '20 minutes' + interval '1 second',
   'COMPLETED', '{"statusCode": 200, "body": "{\"refund\": \"re_5Tb1\"}"}', NULL),
  ('orders-ProcessPayment.app.lambda_handler', '"k-1006"',
   now() - interval '10 seconds', now() - interval '10 seconds',
   'INPROGRESS', NULL, '{"amount": 3300, "currency": "eur", "order": "ord-1006"}')
) AS s (fn, idem_key, created, written, status, data, payload);
