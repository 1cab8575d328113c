-- Sample rows for schema.sql + view.sql, relative to now() so that they fall
-- in callscope's window whenever they are loaded. What callscope should make
-- of them (stuck_after = 5m, key_rotation_window = 2h):
--   1001 two keys, same ride, 8 s apart, both finished 200 -> key_rotation
--        (critical: executed under 2 keys)
--   1002 the same ride by another user                     -> nothing
--   1003 stopped at ride_created 15 min ago, unlocked      -> stuck_processing
--   1004 card declined: finished with 402                  -> FAILED, nothing
--   1005 a request under way for 10 s                      -> PROCESSING, nothing
-- updated_at is given because these rows stand for keys written earlier; the
-- application itself never sets it (the DEFAULT and the trigger do).

INSERT INTO idempotency_keys
  (created_at, idempotency_key, last_run_at, locked_at, request_method, request_params,
   request_path, response_code, response_body, recovery_point, user_id, updated_at)
VALUES
  -- The client timed out on the first key and retried the same ride under a new key.
  (now() - interval '30 minutes', '0b6f3c1e-5f0a-4d8e-9a51-7c2d4e8f1a01',
   now() - interval '30 minutes', NULL, 'POST',
   '{"origin_lat": 37.775, "origin_lon": -122.419, "target_lat": 37.804, "target_lon": -122.271}',
   '/rides', 200, '{"message": "Payment accepted. Your pilot is on their way!"}',
   'finished', 1001, now() - interval '30 minutes' + interval '3 seconds'),
  (now() - interval '30 minutes' + interval '8 seconds', '7d2a9e44-1b3c-4f6e-8d70-2a9b5c3e6f02',
   now() - interval '30 minutes' + interval '8 seconds', NULL, 'POST',
   '{"target_lon": -122.271, "target_lat": 37.804, "origin_lon": -122.419, "origin_lat": 37.775}',
   '/rides', 200, '{"message": "Payment accepted. Your pilot is on their way!"}',
   'finished', 1001, now() - interval '30 minutes' + interval '10 seconds'),
  -- Another user booking the very same ride: a request of its own.
  (now() - interval '25 minutes', 'c4e8a2b6-9d1f-4a3c-b5e7-0f2d4c6a8e03',
   now() - interval '25 minutes', NULL, 'POST',
   '{"origin_lat": 37.775, "origin_lon": -122.419, "target_lat": 37.804, "target_lon": -122.271}',
   '/rides', 200, '{"message": "Payment accepted. Your pilot is on their way!"}',
   'finished', 1002, now() - interval '25 minutes' + interval '2 seconds'),
  -- The charge phase failed with an internal error; the key was unlocked and
  -- the client never came back.
  (now() - interval '15 minutes', 'f1a3c5e7-2b4d-4f60-8a9c-1e3d5f7b9d04',
   now() - interval '15 minutes', NULL, 'POST',
   '{"origin_lat": 40.7128, "origin_lon": -74.0060, "target_lat": 40.6413, "target_lon": -73.7781}',
   '/rides', NULL, NULL, 'ride_created', 1003, now() - interval '15 minutes' + interval '1 second'),
  -- The card was declined: a final answer that every retry gets back.
  (now() - interval '12 minutes', '9e7c5a3f-1d2b-4e4c-a6f8-3b5d7f9a1c05',
   now() - interval '12 minutes', NULL, 'POST',
   '{"origin_lat": 51.5074, "origin_lon": -0.1278, "target_lat": 51.4700, "target_lon": -0.4543}',
   '/rides', 402, '{"error": "Error from payment processor: Your card was declined."}',
   'finished', 1004, now() - interval '12 minutes' + interval '2 seconds'),
  -- A request under way right now.
  (now() - interval '10 seconds', '3c5e7a9b-4d6f-4b8a-9c1e-5f7b9d1e3a06',
   now() - interval '10 seconds', now() - interval '10 seconds', 'POST',
   '{"origin_lat": 48.8566, "origin_lon": 2.3522, "target_lat": 49.0097, "target_lon": 2.5479}',
   '/rides', NULL, NULL, 'started', 1005, now() - interval '10 seconds');
