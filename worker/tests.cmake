# The worker's unit tests, and those of what it relies on in common/ (the
# link codec, socket names, write batch and write_now, hashing, close codes): one
# executable. Included from tests/CMakeLists.txt.
find_package(GTest REQUIRED)
include(GoogleTest)

add_executable(framegate_worker_tests
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link_codec_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link/link_socket_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link/link_dir_trust_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link/write_batch_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link/write_now_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/link/hot_envelopes_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/string_pool_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/close_codes_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/hashing_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/backoff_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/link_dir_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/common/json/json_scan_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/rooms_protocol_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/rooms_app_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/rooms_recovery_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/room_permissions_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/rooms_presence_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/room_history_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/dispatcher_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/gateway_hub_broker_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/worker_runtime_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_url_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_envelope_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_connection_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_broker_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_cluster_broker_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_history_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/redis_presence_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker_publish_envelope_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/cluster_slots_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/room_channel_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/flush_gate_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/inbound_check_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/publish_dedup_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/publish_outbox_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/refill_hold_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/subscription_set_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/tcp_liveness_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/broker/redis_client_identity_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/worker_routes_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/worker/config_test.cpp
)
target_include_directories(framegate_worker_tests PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(framegate_worker_tests PRIVATE framegate_worker_core GTest::gtest GTest::gtest_main)
gtest_discover_tests(framegate_worker_tests PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)

# The JSON error path's allocation bound: its own executable, because it
# replaces the global operator new to count what the parser allocates.
add_executable(framegate_json_alloc_tests ${PROJECT_SOURCE_DIR}/tests/unit/common/json/json_text_alloc_test.cpp)
target_include_directories(framegate_json_alloc_tests PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(framegate_json_alloc_tests PRIVATE framegate_worker_core GTest::gtest GTest::gtest_main)
# GCC sees the replacement delete's free() inlined next to `new` and warns,
# though the replacement new is malloc: the pair matches.
target_compile_options(framegate_json_alloc_tests PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete>)
gtest_discover_tests(framegate_json_alloc_tests PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
