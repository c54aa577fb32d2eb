#include "http/pki.h"

#include <memory>
#include <stdexcept>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace sriovdra::http {
namespace {

template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, decltype([](T* p) { Free(p); })>;
using Key = Owned<EVP_PKEY, EVP_PKEY_free>;
using Cert = Owned<X509, X509_free>;
using Bio = Owned<BIO, BIO_free_all>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("OpenSSL failed: ") + what);
}

std::string bioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string keyPem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "write key");
  return bioString(bio.get());
}

std::string certPem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "write cert");
  return bioString(bio.get());
}

void addExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

Cert newCert(EVP_PKEY* key, const std::string& cn, const std::vector<std::string>& orgs,
             std::chrono::hours validity) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  Owned<BIGNUM, BN_free> serial(BN_new());
  BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                  static_cast<long>(std::chrono::seconds(validity).count()));
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : orgs) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

Key readKey(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  // No passphrase: an encrypted key is refused, never asked for on the terminal.
  auto no_passphrase = [](char*, int, int, void*) { return 0; };
  return Key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
}

Cert readCert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

Key loadKey(const std::string& pem) {
  Key key = readKey(pem);
  check(key != nullptr, "read key");
  return key;
}

Cert loadCert(const std::string& pem) {
  Cert cert = readCert(pem);
  check(cert != nullptr, "read cert");
  return cert;
}

std::vector<std::string> dnsNames(X509* cert) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type != GEN_DNS) continue;
    const unsigned char* data = ASN1_STRING_get0_data(n->d.dNSName);
    out.emplace_back(reinterpret_cast<const char*>(data),
                     static_cast<size_t>(ASN1_STRING_length(n->d.dNSName)));
  }
  GENERAL_NAMES_free(names);
  return out;
}

}  // namespace

Pem makeCa(const std::string& common_name, std::chrono::hours validity) {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "keygen");
  Cert cert = newCert(key.get(), common_name, {}, validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  addExt(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  addExt(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  addExt(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "sign");
  return {certPem(cert.get()), keyPem(key.get())};
}

Pem makeCert(const Pem& ca, const CertSpec& spec) {
  Key ca_key = loadKey(ca.key);
  Cert ca_cert = loadCert(ca.cert);
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "keygen");
  Cert cert = newCert(key.get(), spec.common_name, spec.organizations, spec.validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  addExt(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  addExt(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  std::string eku;
  if (spec.server) eku += "serverAuth";
  if (spec.client) eku += std::string(eku.empty() ? "" : ",") + "clientAuth";
  if (!eku.empty()) addExt(cert.get(), ca_cert.get(), NID_ext_key_usage, eku);
  std::string san;
  for (const auto& d : spec.dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + d;
  for (const auto& ip : spec.ip_addresses)
    san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  if (!san.empty()) addExt(cert.get(), ca_cert.get(), NID_subject_alt_name, san);
  addExt(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always");
  check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "sign");
  return {certPem(cert.get()), keyPem(key.get())};
}

Result<CertInfo> inspectCert(const Pem& pair, const std::string& ca_cert) {
  auto invalid = [](const std::string& what) { return Status(Code::kInvalidArgument, what); };
  Cert cert = readCert(pair.cert);
  if (cert == nullptr) return invalid("the certificate is not a PEM certificate");
  Key key = readKey(pair.key);
  if (key == nullptr) return invalid("the key is not a PEM private key");
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return invalid("the key does not go with the certificate");
  }
  Cert ca = readCert(ca_cert);
  if (ca == nullptr) return invalid("the CA certificate is not a PEM certificate");
  EVP_PKEY* ca_key = X509_get0_pubkey(ca.get());
  if (ca_key == nullptr || X509_verify(cert.get(), ca_key) != 1 ||
      X509_check_issued(ca.get(), cert.get()) != X509_V_OK) {
    return invalid("the certificate is not signed by the CA");
  }
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, nullptr, X509_get0_notAfter(cert.get())) != 1) {
    return invalid("the certificate's notAfter cannot be read");
  }
  CertInfo info;
  info.not_after = std::chrono::system_clock::now() + std::chrono::hours(24) * days +
                   std::chrono::seconds(seconds);
  info.dns_names = dnsNames(cert.get());
  return info;
}

}  // namespace sriovdra::http
