#include "gateway/ws/deflate_negotiation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/support/param_name.hpp"

namespace {

FG_PRINT_CASES_BY_NAME()

using namespace fg::ws;

std::vector<extension_offer> parsed(std::string_view header) {
  std::vector<extension_offer> out;
  EXPECT_TRUE(parse_extensions(header, out)) << header;
  return out;
}

// ---------------------------------------------------------------------------
// RFC 6455 §9.1 grammar

TEST(extension_grammar, names_parameters_and_values) {
  const auto v =
      parsed("permessage-deflate; client_max_window_bits; server_max_window_bits=10, x-webkit-deflate-frame");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "permessage-deflate");
  ASSERT_EQ(v[0].params.size(), 2u);
  EXPECT_EQ(v[0].params[0], (extension_param{"client_max_window_bits", std::nullopt}));
  EXPECT_EQ(v[0].params[1], (extension_param{"server_max_window_bits", "10"}));
  EXPECT_EQ(v[1].name, "x-webkit-deflate-frame");
  EXPECT_TRUE(v[1].params.empty());
}

TEST(extension_grammar, white_space_around_separators_is_optional) {
  const auto v = parsed(" \tpermessage-deflate\t;server_max_window_bits = 9 ;client_no_context_takeover ,foo ");
  ASSERT_EQ(v.size(), 2u);
  ASSERT_EQ(v[0].params.size(), 2u);
  EXPECT_EQ(v[0].params[0], (extension_param{"server_max_window_bits", "9"}));
  EXPECT_EQ(v[0].params[1], (extension_param{"client_no_context_takeover", std::nullopt}));
  EXPECT_EQ(v[1].name, "foo");
}

TEST(extension_grammar, quoted_values_are_unescaped) {
  const auto v = parsed(R"(permessage-deflate; server_max_window_bits="10"; client_max_window_bits="1\5")");
  ASSERT_EQ(v.size(), 1u);
  ASSERT_EQ(v[0].params.size(), 2u);
  EXPECT_EQ(v[0].params[0].value, "10");
  EXPECT_EQ(v[0].params[1].value, "15");
}

TEST(extension_grammar, empty_list_elements_are_skipped) {
  // RFC 7230 §7: a recipient accepts and ignores empty list elements.
  const auto v = parsed(", ,permessage-deflate,, foo ,");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "permessage-deflate");
  EXPECT_EQ(v[1].name, "foo");
  EXPECT_TRUE(parsed("").empty());
  EXPECT_TRUE(parsed("  ").empty());
}

TEST(extension_grammar, values_parse_alike_in_every_form) {
  for (const char* header :
       {"permessage-deflate;server_max_window_bits=12", "permessage-deflate; server_max_window_bits=12",
        "permessage-deflate ; server_max_window_bits = 12 ", "permessage-deflate;server_max_window_bits=\"12\""}) {
    const auto v = parsed(header);
    ASSERT_EQ(v.size(), 1u) << header;
    ASSERT_EQ(v[0].params.size(), 1u) << header;
    EXPECT_EQ(v[0].params[0], (extension_param{"server_max_window_bits", "12"})) << header;
  }
}

struct malformed_case {
  std::string name;
  std::string header;
};

class extension_grammar_malformed : public ::testing::TestWithParam<malformed_case> {};

TEST_P(extension_grammar_malformed, is_refused) {
  std::vector<extension_offer> out;
  EXPECT_FALSE(parse_extensions(GetParam().header, out)) << GetParam().header;
}

INSTANTIATE_TEST_SUITE_P(
    cases, extension_grammar_malformed,
    ::testing::Values(malformed_case{"parameter_without_extension", "; server_no_context_takeover"},
                      malformed_case{"empty_parameter", "permessage-deflate;"},
                      malformed_case{"empty_parameter_between", "permessage-deflate;; client_max_window_bits"},
                      malformed_case{"empty_value", "permessage-deflate; server_max_window_bits="},
                      malformed_case{"empty_value_before_comma", "permessage-deflate; server_max_window_bits=, foo"},
                      malformed_case{"space_inside_name", "permessage deflate"},
                      malformed_case{"separator_in_name", "permessage-deflate/1"},
                      malformed_case{"separator_in_value", "permessage-deflate; server_max_window_bits=1/0"},
                      malformed_case{"unterminated_quote", "permessage-deflate; server_max_window_bits=\"10"},
                      malformed_case{"quoted_value_not_a_token", "permessage-deflate; server_max_window_bits=\"1 0\""},
                      malformed_case{"empty_quoted_value", "permessage-deflate; server_max_window_bits=\"\""},
                      malformed_case{"escape_at_end", "permessage-deflate; a=\"1\\"},
                      malformed_case{"control_character", std::string("permessage-deflate; a=\"1\x01\"")},
                      malformed_case{"quoted_name", "\"permessage-deflate\""},
                      malformed_case{"two_equals", "permessage-deflate; a=1=2"},
                      malformed_case{"garbage_after_value", "permessage-deflate; a=\"1\"x"}),
    fg::test::param_name{});

// ---------------------------------------------------------------------------
// RFC 7692 §7: the offer's parameters

offer_error offer_of(std::string_view header, deflate_offer& offer) {
  const auto v = parsed(header);
  EXPECT_EQ(v.size(), 1u) << header;
  return v.empty() ? offer_error::none : parse_deflate_offer(v[0].params, offer);
}

TEST(deflate_offer, no_parameters) {
  deflate_offer o;
  ASSERT_EQ(offer_of("permessage-deflate", o), offer_error::none);
  EXPECT_FALSE(o.server_no_context_takeover);
  EXPECT_FALSE(o.client_no_context_takeover);
  EXPECT_EQ(o.server_max_window_bits, 0);
  EXPECT_FALSE(o.client_max_window_bits);
}

TEST(deflate_offer, every_parameter) {
  deflate_offer o;
  ASSERT_EQ(offer_of("permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
                     "server_max_window_bits=10; client_max_window_bits=12",
                     o),
            offer_error::none);
  EXPECT_TRUE(o.server_no_context_takeover);
  EXPECT_TRUE(o.client_no_context_takeover);
  EXPECT_EQ(o.server_max_window_bits, 10);
  EXPECT_TRUE(o.client_max_window_bits);
  EXPECT_EQ(o.client_max_window_bits_value, 12);
}

TEST(deflate_offer, client_max_window_bits_without_value) {
  deflate_offer o;
  ASSERT_EQ(offer_of("permessage-deflate; client_max_window_bits", o), offer_error::none);
  EXPECT_TRUE(o.client_max_window_bits);
  EXPECT_EQ(o.client_max_window_bits_value, 0);
}

TEST(deflate_offer, every_window_size_from_8_to_15) {
  for (int bits = 8; bits <= 15; ++bits) {
    deflate_offer o;
    const std::string b = std::to_string(bits);
    ASSERT_EQ(offer_of("permessage-deflate; server_max_window_bits=" + b + "; client_max_window_bits=" + b, o),
              offer_error::none)
        << bits;
    EXPECT_EQ(o.server_max_window_bits, bits);
    EXPECT_EQ(o.client_max_window_bits_value, bits);
  }
}

struct refused_offer {
  std::string name;
  std::string header;
  offer_error expected;
};

class deflate_offer_refused : public ::testing::TestWithParam<refused_offer> {};

TEST_P(deflate_offer_refused, with_its_reason) {
  deflate_offer o;
  EXPECT_EQ(offer_of(GetParam().header, o), GetParam().expected) << GetParam().header;
}

std::vector<refused_offer> refused_offers() {
  const auto bad = offer_error::invalid_value;
  const auto dup = offer_error::duplicate_parameter;
  std::vector<refused_offer> v{
      {"unknown_parameter", "permessage-deflate; foo", offer_error::unknown_parameter},
      {"unknown_parameter_with_value", "permessage-deflate; foo=1", offer_error::unknown_parameter},
      {"parameter_names_are_case_sensitive", "permessage-deflate; Server_No_Context_Takeover",
       offer_error::unknown_parameter},
      {"response_only_looking_name", "permessage-deflate; max_window_bits=10", offer_error::unknown_parameter},
      {"server_no_context_takeover_with_value", "permessage-deflate; server_no_context_takeover=1", bad},
      {"client_no_context_takeover_with_value", "permessage-deflate; client_no_context_takeover=true", bad},
      {"server_max_window_bits_without_value", "permessage-deflate; server_max_window_bits", bad},
      {"duplicate_server_no_context_takeover",
       "permessage-deflate; server_no_context_takeover; server_no_context_takeover", dup},
      {"duplicate_client_no_context_takeover",
       "permessage-deflate; client_no_context_takeover; client_no_context_takeover", dup},
      {"duplicate_server_max_window_bits", "permessage-deflate; server_max_window_bits=10; server_max_window_bits=10",
       dup},
      {"duplicate_client_max_window_bits", "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
       dup},
      {"duplicate_client_max_window_bits_values",
       "permessage-deflate; client_max_window_bits=9; client_max_window_bits=9", dup},
  };
  for (const char* value : {"7", "16", "0", "08", "010", "+9", "-9", "9.0", "abc", "1e1", "150"}) {
    v.push_back({std::string("server_max_window_bits_") + value,
                 std::string("permessage-deflate; server_max_window_bits=") + value, bad});
    v.push_back({std::string("client_max_window_bits_") + value,
                 std::string("permessage-deflate; client_max_window_bits=") + value, bad});
  }
  for (auto& c : v) {  // test names are identifiers
    std::string name;
    for (const char ch : c.name)
      name += ch == '.' ? "dot" : ch == '+' ? "plus" : ch == '-' ? "minus" : std::string(1, ch);
    c.name = name;
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(cases, deflate_offer_refused, ::testing::ValuesIn(refused_offers()), fg::test::param_name{});

TEST(deflate_offer, error_names) {
  EXPECT_EQ(to_string(offer_error::none), "none");
  EXPECT_EQ(to_string(offer_error::unknown_parameter), "unknown_parameter");
  EXPECT_EQ(to_string(offer_error::duplicate_parameter), "duplicate_parameter");
  EXPECT_EQ(to_string(offer_error::invalid_value), "invalid_value");
}

// ---------------------------------------------------------------------------
// The agreement and the response

deflate_options options(bool server_takeover = false, bool client_takeover = false, int window_bits = 15) {
  deflate_options o;
  o.enabled = true;
  o.server_takeover = server_takeover;
  o.client_takeover = client_takeover;
  o.max_window_bits = window_bits;
  return o;
}

struct agreement_case {
  std::string name;
  std::string offer;
  deflate_options options;
  std::string response;
  deflate_params params;
};

class deflate_agreement_cases : public ::testing::TestWithParam<agreement_case> {};

TEST_P(deflate_agreement_cases, response_and_parameters) {
  const auto& c = GetParam();
  const std::string_view header = c.offer;
  const auto n = negotiate_deflate(std::span(&header, 1), c.options);
  ASSERT_EQ(n.status, negotiation_status::accepted) << c.offer;
  EXPECT_EQ(n.agreement.response, c.response) << c.offer;
  EXPECT_EQ(n.agreement.params, c.params) << c.offer;
}

deflate_params params(bool server_takeover, bool client_takeover, int server_bits, int client_bits) {
  return {true, server_takeover, client_takeover, static_cast<std::uint8_t>(server_bits),
          static_cast<std::uint8_t>(client_bits)};
}

constexpr const char* no_takeover = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

std::vector<agreement_case> agreement_cases() {
  const std::string base = no_takeover;
  return {
      // By default nothing is taken over, whatever the client offers.
      {"plain_offer", "permessage-deflate", options(), base, params(false, false, 15, 15)},
      {"chromium_offer", "permessage-deflate; client_max_window_bits", options(), base, params(false, false, 15, 15)},
      {"offer_with_both_no_context_takeover",
       "permessage-deflate; server_no_context_takeover; client_no_context_takeover", options(), base,
       params(false, false, 15, 15)},
      // §7.1.2.1: an offered server_max_window_bits is answered with it or less.
      {"server_max_window_bits_offered", "permessage-deflate; server_max_window_bits=10", options(),
       base + "; server_max_window_bits=10", params(false, false, 10, 15)},
      {"server_max_window_bits_8", "permessage-deflate; server_max_window_bits=8", options(),
       base + "; server_max_window_bits=8", params(false, false, 8, 15)},
      {"server_max_window_bits_capped", "permessage-deflate; server_max_window_bits=14", options(false, false, 11),
       base + "; server_max_window_bits=11", params(false, false, 11, 15)},
      {"server_max_window_bits_below_cap", "permessage-deflate; server_max_window_bits=9", options(false, false, 11),
       base + "; server_max_window_bits=9", params(false, false, 9, 15)},
      {"cap_announced_unasked", "permessage-deflate", options(false, false, 10), base + "; server_max_window_bits=10",
       params(false, false, 10, 15)},
      // Without client takeover the client's window is not our concern.
      {"client_max_window_bits_value_without_client_takeover", "permessage-deflate; client_max_window_bits=10",
       options(), base, params(false, false, 15, 15)},
      // Server takeover, unless the client asks us not to (§7.1.1.1).
      {"server_takeover", "permessage-deflate", options(true, false), "permessage-deflate; client_no_context_takeover",
       params(true, false, 15, 15)},
      {"server_takeover_refused_by_client", "permessage-deflate; server_no_context_takeover", options(true, false),
       base, params(false, false, 15, 15)},
      {"server_takeover_with_window", "permessage-deflate; server_max_window_bits=12", options(true, false, 10),
       "permessage-deflate; client_no_context_takeover; server_max_window_bits=10", params(true, false, 10, 15)},
      // Client takeover: its window is capped through client_max_window_bits.
      {"client_takeover", "permessage-deflate; client_max_window_bits", options(false, true),
       "permessage-deflate; server_no_context_takeover; client_max_window_bits=15", params(false, true, 15, 15)},
      {"client_takeover_capped", "permessage-deflate; client_max_window_bits", options(false, true, 10),
       "permessage-deflate; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits=10",
       params(false, true, 10, 10)},
      {"client_takeover_client_value_below_cap", "permessage-deflate; client_max_window_bits=9",
       options(false, true, 12),
       "permessage-deflate; server_no_context_takeover; server_max_window_bits=12; client_max_window_bits=9",
       params(false, true, 12, 9)},
      {"client_takeover_client_value_above_cap", "permessage-deflate; client_max_window_bits=14",
       options(false, true, 12),
       "permessage-deflate; server_no_context_takeover; server_max_window_bits=12; client_max_window_bits=12",
       params(false, true, 12, 12)},
      {"client_takeover_uncapped_without_parameter", "permessage-deflate", options(false, true),
       "permessage-deflate; server_no_context_takeover", params(false, true, 15, 15)},
      // §7.1.2.2: the cap cannot be told to a client that did not offer the
      // parameter, so its context is not taken over.
      {"client_takeover_needs_the_parameter_to_cap", "permessage-deflate", options(false, true, 10),
       base + "; server_max_window_bits=10", params(false, false, 10, 15)},
      {"client_takeover_refused_by_client", "permessage-deflate; client_no_context_takeover; client_max_window_bits",
       options(false, true), base, params(false, false, 15, 15)},
      {"both_takeovers", "permessage-deflate; client_max_window_bits=11; server_max_window_bits=11",
       options(true, true), "permessage-deflate; server_max_window_bits=11; client_max_window_bits=11",
       params(true, true, 11, 11)},
  };
}

INSTANTIATE_TEST_SUITE_P(cases, deflate_agreement_cases, ::testing::ValuesIn(agreement_cases()),
                         fg::test::param_name{});

// ---------------------------------------------------------------------------
// negotiate_deflate over whole headers

deflate_negotiation negotiate(std::vector<std::string_view> headers, const deflate_options& opt = options()) {
  return negotiate_deflate(headers, opt);
}

TEST(negotiate_deflate, no_header_or_no_offer_declines) {
  EXPECT_EQ(negotiate({}).status, negotiation_status::declined);
  EXPECT_EQ(negotiate({"x-webkit-deflate-frame"}).status, negotiation_status::declined);
  EXPECT_EQ(negotiate({""}).status, negotiation_status::declined);
}

TEST(negotiate_deflate, the_first_valid_offer_is_accepted) {
  // §7: an invalid offer is declined and the next one considered.
  const auto n =
      negotiate({"foo, permessage-deflate; server_max_window_bits=7, permessage-deflate; "
                 "server_max_window_bits=9, permessage-deflate; server_max_window_bits=10"});
  ASSERT_EQ(n.status, negotiation_status::accepted);
  EXPECT_EQ(n.agreement.params.server_window_bits, 9);
}

TEST(negotiate_deflate, offers_over_repeated_headers_keep_their_order) {
  const auto n = negotiate({"permessage-deflate; bogus", "permessage-deflate; server_max_window_bits=11",
                            "permessage-deflate; server_max_window_bits=12"});
  ASSERT_EQ(n.status, negotiation_status::accepted);
  EXPECT_EQ(n.agreement.params.server_window_bits, 11);
}

TEST(negotiate_deflate, only_invalid_offers_decline) {
  const auto n = negotiate({"permessage-deflate; server_max_window_bits", "permessage-deflate; foo",
                            "permessage-deflate; client_no_context_takeover; client_no_context_takeover"});
  EXPECT_EQ(n.status, negotiation_status::declined);
  EXPECT_FALSE(n.agreement.params.enabled);
  EXPECT_TRUE(n.agreement.response.empty());
}

TEST(negotiate_deflate, extension_names_are_matched_exactly) {
  EXPECT_EQ(negotiate({"permessage-deflate-2"}).status, negotiation_status::declined);
  EXPECT_EQ(negotiate({"Permessage-Deflate"}).status, negotiation_status::declined);
}

TEST(negotiate_deflate, a_malformed_header_anywhere_is_malformed) {
  EXPECT_EQ(negotiate({"permessage-deflate; server_max_window_bits=\"10"}).status,
            negotiation_status::malformed_header);
  // Even after an acceptable offer in an earlier header.
  EXPECT_EQ(negotiate({"permessage-deflate", "foo;;"}).status, negotiation_status::malformed_header);
}

}  // namespace
