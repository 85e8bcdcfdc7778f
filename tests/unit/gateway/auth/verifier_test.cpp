#include "gateway/auth/verifier.hpp"

#include <gtest/gtest.h>

#include "common/config_error.hpp"
#include "tests/unit/gateway/auth/token_maker.hpp"

namespace fg::auth {
namespace {

using nlohmann::json;
using testing::make_ec;
using testing::make_ed25519;
using testing::make_rsa;
using testing::public_pem;
using testing::sign;

constexpr std::int64_t now = 1'700'000'000;
const std::string secret(32, 's');

// One key pair of each asymmetric type, made once (RSA generation is slow).
struct keys {
  testing::pkey_ptr rsa = make_rsa(), ec = make_ec(), ed = make_ed25519();
  testing::pkey_ptr rsa2 = make_rsa(), ec2 = make_ec(), ed2 = make_ed25519();
};
const keys& pairs() {
  static const keys k;
  return k;
}

json claims(json extra = json::object()) {
  json c{{"sub", "alice"}, {"exp", now + 60}};
  c.update(extra);
  return c;
}

verifier_options opts() {
  verifier_options o;
  o.leeway_s = 5;
  return o;
}

auth_error check(const std::string& token, const key_set& set, const verifier_options& o = opts(),
                 std::int64_t at = now) {
  return verify_token(token, set, o, at).error;
}

key_set secret_set(const std::string& s = secret) { return hmac_key(s, "test"); }
key_set pem_set(EVP_PKEY* k) { return pem_key(public_pem(k), "test"); }

// Every algorithm: its key set, a token signed with the right key, one
// signed with another key of the same type.
struct alg_case {
  std::string alg;
  key_set set;
  std::string good, other_key;
};
std::vector<alg_case> every_alg() {
  const auto& p = pairs();
  std::vector<alg_case> cases;
  for (const char* hs : {"HS256", "HS384", "HS512"})
    cases.push_back({hs, secret_set(), sign(hs, {}, claims(), secret), sign(hs, {}, claims(), std::string(32, 't'))});
  cases.push_back({"RS256", pem_set(p.rsa.get()), sign("RS256", {}, claims(), {}, p.rsa.get()),
                   sign("RS256", {}, claims(), {}, p.rsa2.get())});
  cases.push_back({"ES256", pem_set(p.ec.get()), sign("ES256", {}, claims(), {}, p.ec.get()),
                   sign("ES256", {}, claims(), {}, p.ec2.get())});
  cases.push_back({"EdDSA", pem_set(p.ed.get()), sign("EdDSA", {}, claims(), {}, p.ed.get()),
                   sign("EdDSA", {}, claims(), {}, p.ed2.get())});
  return cases;
}

TEST(Verifier, EveryAlgorithmAcceptsItsSignatureAndRefusesAnotherKeys) {
  for (const auto& c : every_alg()) {
    const auto v = verify_token(c.good, c.set, opts(), now);
    EXPECT_EQ(v.error, auth_error::none) << c.alg;
    EXPECT_EQ(v.who.user, "alice") << c.alg;
    EXPECT_EQ(check(c.other_key, c.set), auth_error::bad_signature) << c.alg;
  }
}

TEST(Verifier, AFlippedBitInAnyPartIsRefused) {
  for (const auto& c : every_alg()) {
    // The last signature character, then a payload character (the claims change under the signature).
    std::string sig_flip = c.good;
    sig_flip[sig_flip.size() - 2] = sig_flip[sig_flip.size() - 2] == 'A' ? 'B' : 'A';
    EXPECT_EQ(check(sig_flip, c.set), auth_error::bad_signature) << c.alg;
    const auto dot = c.good.find('.');
    const std::string forged = c.good.substr(0, dot + 1) + base64url_encode(claims({{"sub", "mallory"}}).dump()) +
                               c.good.substr(c.good.rfind('.'));
    EXPECT_EQ(check(forged, c.set), auth_error::bad_signature) << c.alg;
  }
}

TEST(Verifier, AlgNoneIsNeverAccepted) {
  const std::string unsigned_token =
      base64url_encode(R"({"alg":"none"})") + "." + base64url_encode(claims().dump()) + ".";
  EXPECT_EQ(check(unsigned_token, secret_set()), auth_error::unsupported_algorithm);
  // With something in the signature part too.
  EXPECT_EQ(check(unsigned_token + "AAAA", secret_set()), auth_error::unsupported_algorithm);
  for (const char* alg : {"None", "NONE", "HS1", "RS512", "PS256", "ES384"})
    EXPECT_EQ(check(sign("HS256", {{"alg", alg}}, claims(), secret), secret_set()), auth_error::unsupported_algorithm)
        << alg;
}

TEST(Verifier, AnAlgorithmNeverUsesAKeyOfAnotherType) {
  const auto& p = pairs();
  // The classic confusion: HS256 keyed with the RSA public key's PEM text.
  const std::string pem = public_pem(p.rsa.get());
  const std::string confused = sign("HS256", {}, claims(), pem);
  EXPECT_EQ(check(confused, pem_set(p.rsa.get())), auth_error::unknown_key);
  // Each asymmetric algorithm against each other type's key.
  EXPECT_EQ(check(sign("ES256", {}, claims(), {}, p.ec.get()), pem_set(p.rsa.get())), auth_error::unknown_key);
  EXPECT_EQ(check(sign("RS256", {}, claims(), {}, p.rsa.get()), pem_set(p.ed.get())), auth_error::unknown_key);
  EXPECT_EQ(check(sign("EdDSA", {}, claims(), {}, p.ed.get()), pem_set(p.ec.get())), auth_error::unknown_key);
  EXPECT_EQ(check(sign("RS256", {}, claims(), {}, p.rsa.get()), secret_set()), auth_error::unknown_key);
  // signature_valid itself refuses a key of the wrong type.
  const auto set = pem_set(p.rsa.get());
  EXPECT_FALSE(signature_valid(jwt_alg::hs256, set.keys()[0], "a.b", "x"));
}

TEST(Verifier, ExpAndNbfAllowTheLeewayAndNoMore) {
  const auto set = secret_set();
  const auto at = [&](json extra, std::int64_t t) {
    return check(sign("HS256", {}, claims(extra), secret), set, opts(), t);
  };
  EXPECT_EQ(at({{"exp", now}}, now + 4), auth_error::none);
  EXPECT_EQ(at({{"exp", now}}, now + 5), auth_error::expired);
  EXPECT_EQ(at({{"exp", now - 100}}, now), auth_error::expired);
  EXPECT_EQ(at({{"nbf", now + 5}}, now), auth_error::none);
  EXPECT_EQ(at({{"nbf", now + 6}}, now), auth_error::not_yet_valid);
  EXPECT_EQ(at({{"exp", 1.7e9 + 0.9}}, 1'700'000'004), auth_error::none) << "a fraction is dropped";
  // No exp: valid for ever (the connection is never closed for it).
  json no_exp = claims();
  no_exp.erase("exp");
  const auto v = verify_token(sign("HS256", {}, no_exp, secret), set, opts(), now);
  EXPECT_EQ(v.error, auth_error::none);
  EXPECT_FALSE(v.who.valid_until_s.has_value());
  // With exp: valid until exp plus the leeway.
  EXPECT_EQ(verify_token(sign("HS256", {}, claims(), secret), set, opts(), now).who.valid_until_s, now + 65);
  // Dates at the edges of int64 do not wrap.
  EXPECT_EQ(at({{"exp", INT64_MAX}}, now), auth_error::none);
  EXPECT_EQ(at({{"nbf", INT64_MIN}}, now), auth_error::none);
  EXPECT_EQ(at({{"exp", INT64_MIN}}, now), auth_error::expired);
}

TEST(Verifier, IssuerAndAudienceAreCheckedWhenConfigured) {
  const auto set = secret_set();
  auto o = opts();
  o.issuer = "https://id.example";
  o.audience = "framegate";
  const auto with = [&](json extra) { return check(sign("HS256", {}, claims(extra), secret), set, o); };
  EXPECT_EQ(with({{"iss", "https://id.example"}, {"aud", "framegate"}}), auth_error::none);
  EXPECT_EQ(with({{"iss", "https://id.example"}, {"aud", {"other", "framegate"}}}), auth_error::none);
  EXPECT_EQ(with({{"iss", "https://evil.example"}, {"aud", "framegate"}}), auth_error::wrong_issuer);
  EXPECT_EQ(with({{"aud", "framegate"}}), auth_error::wrong_issuer) << "no iss";
  EXPECT_EQ(with({{"iss", "https://id.example"}, {"aud", "other"}}), auth_error::wrong_audience);
  EXPECT_EQ(with({{"iss", "https://id.example"}, {"aud", json::array()}}), auth_error::wrong_audience);
  EXPECT_EQ(with({{"iss", "https://id.example"}}), auth_error::wrong_audience) << "no aud";
  // Not configured: not checked.
  EXPECT_EQ(check(sign("HS256", {}, claims({{"iss", "x"}, {"aud", "y"}}), secret), set), auth_error::none);
}

TEST(Verifier, ClaimsOfTheWrongTypeAreMalformed) {
  const auto set = secret_set();
  for (const json& bad : {json{{"exp", "tomorrow"}}, json{{"nbf", true}}, json{{"aud", 7}}, json{{"aud", {"a", 1}}},
                          json{{"iss", json::array()}}, json{{"sub", 42}}, json{{"rooms", "lobby"}},
                          json{{"rooms", {"a", nullptr}}}, json{{"exp", 1e300}}})
    EXPECT_EQ(check(sign("HS256", {}, claims(bad), secret), set), auth_error::malformed) << bad.dump();
  EXPECT_EQ(check(sign("HS256", {{"kid", 5}}, claims(), secret), set), auth_error::malformed);
  EXPECT_EQ(check(sign("HS256", {{"alg", 256}}, claims(), secret), set), auth_error::malformed);
}

TEST(Verifier, SubIsRequiredAndRoomsAreHandedOn) {
  const auto set = secret_set();
  json no_sub = claims();
  no_sub.erase("sub");
  EXPECT_EQ(check(sign("HS256", {}, no_sub, secret), set), auth_error::missing_subject);
  EXPECT_EQ(check(sign("HS256", {}, claims({{"sub", ""}}), secret), set), auth_error::missing_subject);

  const auto open = verify_token(sign("HS256", {}, claims(), secret), set, opts(), now);
  EXPECT_FALSE(open.who.rooms_restricted);
  EXPECT_TRUE(open.who.rooms_allowed.empty());
  const auto some = verify_token(sign("HS256", {}, claims({{"rooms", {"lobby", "team-*"}}}), secret), set, opts(), now);
  EXPECT_TRUE(some.who.rooms_restricted);
  EXPECT_EQ(some.who.rooms_allowed, (std::vector<std::string>{"lobby", "team-*"}));
  const auto none = verify_token(sign("HS256", {}, claims({{"rooms", json::array()}}), secret), set, opts(), now);
  EXPECT_TRUE(none.who.rooms_restricted) << "an empty claim allows no room, unlike no claim";
  EXPECT_TRUE(none.who.rooms_allowed.empty());
}

TEST(Verifier, MalformedTokensAreRefusedBeforeAnyKeyIsTried) {
  const auto set = secret_set();
  const std::string good = sign("HS256", {}, claims(), secret);
  const auto dot1 = good.find('.'), dot2 = good.rfind('.');
  for (const std::string& bad :
       {std::string(), std::string("abc"), std::string("a.b"), good + ".x", good + ".", std::string(".."),
        good.substr(0, dot2) + ".", "!" + good.substr(1), good.substr(0, dot1) + ".e30=" + good.substr(dot2),
        base64url_encode("[1]") + good.substr(dot1), base64url_encode("{\"alg\":\"HS256\"") + good.substr(dot1),
        good.substr(0, dot1 + 1) + base64url_encode("null") + good.substr(dot2),
        good.substr(0, dot1 + 1) + base64url_encode("{\"sub\":\"a\"} x") + good.substr(dot2),
        good.substr(0, dot2) + ".A"})
    EXPECT_EQ(check(bad, set), auth_error::malformed) << bad;
  // JWE compact form (five parts) is not a JWS.
  EXPECT_EQ(check(good + ".a.b", set), auth_error::malformed);
}

TEST(Verifier, OversizeTokensAreRefusedUnread) {
  const auto set = secret_set();
  auto o = opts();
  const std::string big = sign("HS256", {}, claims({{"pad", std::string(o.max_token_bytes, 'x')}}), secret);
  EXPECT_EQ(check(big, set, o), auth_error::too_large);
  o.max_token_bytes = big.size();
  EXPECT_EQ(check(big, set, o), auth_error::none) << "exactly at the limit";
  EXPECT_EQ(check(std::string(o.max_token_bytes + 1, '.'), set, o), auth_error::too_large);
}

TEST(Verifier, CritHeadersAreRefused) {
  EXPECT_EQ(check(sign("HS256", {{"crit", {"exp"}}}, claims(), secret), secret_set()),
            auth_error::unsupported_algorithm);
}

TEST(Verifier, TheKidSelectsTheKeyOfAJwks) {
  const auto& p = pairs();
  const json jwks{{"keys",
                   {testing::public_jwk(p.rsa.get(), "r1"), testing::public_jwk(p.rsa2.get(), "r2"),
                    testing::public_jwk(p.ec.get(), "e1"), testing::public_jwk(p.ed.get(), "d1")}}};
  const auto set = jwks_keys(jwks.dump(), "test");
  ASSERT_EQ(set.keys().size(), 4u);
  EXPECT_EQ(check(sign("RS256", {{"kid", "r1"}}, claims(), {}, p.rsa.get()), set), auth_error::none);
  EXPECT_EQ(check(sign("RS256", {{"kid", "r2"}}, claims(), {}, p.rsa2.get()), set), auth_error::none);
  EXPECT_EQ(check(sign("RS256", {{"kid", "r1"}}, claims(), {}, p.rsa2.get()), set), auth_error::bad_signature)
      << "the kid's key, not any key that verifies";
  EXPECT_EQ(check(sign("ES256", {{"kid", "e1"}}, claims(), {}, p.ec.get()), set), auth_error::none);
  EXPECT_EQ(check(sign("EdDSA", {{"kid", "d1"}}, claims(), {}, p.ed.get()), set), auth_error::none);
  EXPECT_EQ(check(sign("RS256", {{"kid", "r9"}}, claims(), {}, p.rsa.get()), set), auth_error::unknown_key);
  EXPECT_EQ(check(sign("ES256", {{"kid", "r1"}}, claims(), {}, p.ec.get()), set), auth_error::unknown_key)
      << "a kid of another key type";
  // Without a kid: the first key of the algorithm's type.
  EXPECT_EQ(check(sign("RS256", {}, claims(), {}, p.rsa.get()), set), auth_error::none);
  EXPECT_EQ(check(sign("RS256", {}, claims(), {}, p.rsa2.get()), set), auth_error::bad_signature);
}

TEST(Verifier, Es256SignaturesMustBeRawAndOfTheirSize) {
  const auto& p = pairs();
  const auto set = pem_set(p.ec.get());
  const std::string good = sign("ES256", {}, claims(), {}, p.ec.get());
  const std::string input = good.substr(0, good.rfind('.'));
  // The DER form OpenSSL makes is not the JWS form.
  const std::string der = testing::digest_sign(EVP_sha256(), p.ec.get(), input);
  EXPECT_EQ(check(input + "." + base64url_encode(der), set), auth_error::bad_signature);
  std::string raw;
  ASSERT_TRUE(base64url_decode(good.substr(good.rfind('.') + 1), raw));
  EXPECT_EQ(check(input + "." + base64url_encode(raw.substr(0, 63)), set), auth_error::bad_signature);
  EXPECT_EQ(check(input + "." + base64url_encode(raw + "x"), set), auth_error::bad_signature);
  EXPECT_EQ(check(input + "." + base64url_encode(std::string(64, '\0')), set), auth_error::bad_signature);
}

TEST(KeySet, RefusesUnusableKeyMaterial) {
  EXPECT_THROW(hmac_key(std::string(31, 's'), "test"), config_error);
  EXPECT_THROW(pem_key("not a key", "test"), config_error);
  EXPECT_THROW(pem_key(public_pem(make_rsa(1024).get()), "test"), config_error) << "RSA below 2048 bits";
  EXPECT_THROW(pem_key(public_pem(make_ec("P-384").get()), "test"), config_error) << "only P-256";
  EXPECT_THROW(jwks_keys("{}", "test"), config_error);
  EXPECT_THROW(jwks_keys("not json", "test"), config_error);
  EXPECT_THROW(jwks_keys(R"({"keys":[]})", "test"), config_error) << "no usable key";
  EXPECT_THROW(jwks_keys(R"({"keys":[{"kty":"oct","k":"c2VjcmV0"}]})", "test"), config_error)
      << "a symmetric key is not taken from a JWKS";
  EXPECT_THROW(jwks_keys(R"({"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]})", "test"), config_error);
  json off_curve = testing::public_jwk(pairs().ec.get(), "e");
  off_curve["y"] = base64url_encode(std::string(32, '\x01'));
  EXPECT_THROW(jwks_keys(json{{"keys", {off_curve}}}.dump(), "test"), config_error) << "a point not on the curve";
}

TEST(KeySet, JwksSkipsEncryptionKeysAndHonoursAlg) {
  const auto& p = pairs();
  json enc = testing::public_jwk(p.rsa.get(), "enc");
  enc["use"] = "enc";
  json rs384 = testing::public_jwk(p.rsa.get(), "rs384");
  rs384["alg"] = "RS384";
  json sig = testing::public_jwk(p.ec.get(), "sig");
  sig["use"] = "sig";
  sig["alg"] = "ES256";
  const auto set = jwks_keys(json{{"keys", {enc, rs384, sig}}}.dump(), "test");
  ASSERT_EQ(set.keys().size(), 1u);
  EXPECT_EQ(set.keys()[0].kid, "sig");
}

}  // namespace
}  // namespace fg::auth
