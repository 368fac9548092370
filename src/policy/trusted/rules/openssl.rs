//! openssl: a closed grammar. A known subcommand first, then that subcommand's options as
//! OpenSSL 3.0 reads them (`opt_next` in `apps/lib/opt.c`): `-name` or `--name`, no clusters
//! and no abbreviations, a value as `-name=value` or the next argument, whatever it looks like,
//! and the options end at the first argument that does not start with `-` or at `--`. Each
//! subcommand's option list is `openssl list -options <subcommand>` of OpenSSL 3.0.19; the
//! subcommands that read any other `-name` as a cipher or digest name (`enc -aes-256-cbc`,
//! `dgst -sha256`) accept only names of the cipher and digest families below. An option the
//! grammar does not have is refused, naming it (a newer openssl may load something with it).
//!
//! Refused, and why: the `engine` subcommand and the `-engine`, `-engine_impl`,
//! `-keygen_engine` and `-ssl_client_engine` options (an engine may be a library named by path),
//! `fipsinstall`, `-provider` and `-provider-path` (a provider module named by path or found
//! in a directory the caller names), `-config` and `-conf` (a configuration file loads engines
//! and providers), and, in any argument (values included), the words `engine` and `provider`
//! (`-keyform ENGINE`, `org.openssl.engine:` key addresses). `OPENSSL_CONF`,
//! `OPENSSL_ENGINES` and `OPENSSL_MODULES` are the environment's, which a call cannot set.

use crate::policy::trusted::words::Words;

/// openssl's subcommands that are accepted: the standard commands but `engine` (loads an
/// engine, which may be a library named by path) and `fipsinstall` (loads a provider module
/// named by path), and the digest and cipher names that stand for `dgst` and `enc`. Without a
/// subcommand openssl reads commands from stdin (`engine -pre SO_PATH:…` among them), and an
/// unknown one may be a newer command: both are refused.
pub(crate) const OPENSSL_COMMANDS: Words = Words(
    "asn1parse ca ciphers cmp cms crl crl2pkcs7 dgst dhparam dsa dsaparam ec ecparam enc errstr
     gendsa genpkey genrsa help info kdf list mac nseq ocsp passwd pkcs12 pkcs7 pkcs8 pkey
     pkeyparam pkeyutl prime rand rehash req rsa rsautl s_client s_server s_time sess_id smime
     speed spkac srp storeutl ts verify version x509 base64 zlib md4 md5 rmd160 sha1 sha224
     sha256 sha384 sha512 sha512-224 sha512-256 sha3-224 sha3-256 sha3-384 sha3-512 shake128
     shake256 sm3 blake2b512 blake2s256",
);

/// Cipher families whose names (`aes-256-cbc`, `des-ede3`) stand for `enc`.
pub(crate) const OPENSSL_CIPHERS: Words =
    Words("aes- aria- bf camellia- cast des rc2 rc4 seed sm4 chacha20 idea");

/// Each standard subcommand's options (`openssl list -options <subcommand>`, OpenSSL 3.0.19):
/// `[subcommand]` then its options, names separated by spaces, `=` after a name that takes a
/// value. One string, not a table of pairs, which would cost two relocations per subcommand at
/// every start (see `words`).
const OPTIONS: &str = "\
    [asn1parse] help oid= inform= in= out= noout offset= length= strparse= genstr= genconf= \
    strictpem item= i dump dlimit= \
    [ca] help verbose outdir= in= inform= infiles out= dateopt= notext batch msie_hack ss_cert= \
    spkac= engine= config= name= section= policy= subj= utf8 create_serial rand_serial \
    multivalue-rdn startdate= enddate= days= extensions= extfile= preserveDN noemailDN md= \
    keyfile= keyform= passin= key= cert= certform= selfsign sigopt= vfyopt= gencrl valid= status= \
    updatedb crlexts= crl_reason= crl_hold= crl_compromise= crl_CA_compromise= crl_lastupdate= \
    crl_nextupdate= crldays= crlhours= crlsec= revoke= rand= writerand= provider-path= provider= \
    propquery= \
    [ciphers] help v V stdname convert= s tls1 tls1_1 tls1_2 tls1_3 psk srp ciphersuites= \
    provider-path= provider= propquery= \
    [cmp] help config= section= verbosity= cmd= infotype= geninfo= newkey= newkeypass= subject= \
    issuer= days= reqexts= sans= san_nodefault policies= policy_oids= policy_oids_critical popo= \
    csr= out_trusted= implicit_confirm disable_confirm certout= chainout= oldcert= revreason= \
    server= proxy= no_proxy= recipient= path= keep_alive= msg_timeout= total_timeout= trusted= \
    untrusted= srvcert= expect_sender= ignore_keyusage unprotected_errors extracertsout= \
    cacertsout= ref= secret= cert= own_trusted= key= keypass= digest= mac= extracerts= \
    unprotected_requests certform= keyform= otherpass= engine= provider-path= provider= \
    propquery= rand= writerand= tls_used tls_cert= tls_key= tls_keypass= tls_extra= tls_trusted= \
    tls_host= batch repeat= reqin= reqin_new_tid reqout= rspin= rspout= use_mock_srv port= \
    max_msgs= srv_ref= srv_secret= srv_cert= srv_key= srv_keypass= srv_trusted= srv_untrusted= \
    rsp_cert= rsp_extracerts= rsp_capubs= poll_count= check_after= grant_implicitconf pkistatus= \
    failure= failurebits= statusstring= send_error send_unprotected send_unprot_err \
    accept_unprotected accept_unprot_err accept_raverified policy= purpose= verify_name= \
    verify_depth= auth_level= attime= verify_hostname= verify_email= verify_ip= ignore_critical \
    issuer_checks crl_check crl_check_all policy_check explicit_policy inhibit_any inhibit_map \
    x509_strict extended_crl use_deltas policy_print check_ss_sig trusted_first suiteB_128_only \
    suiteB_128 suiteB_192 partial_chain no_alt_chains no_check_time allow_proxy_certs \
    [cms] help in= out= config= encrypt decrypt sign verify resign sign_receipt verify_receipt= \
    digest_create digest_verify compress uncompress EncryptedData_encrypt EncryptedData_decrypt \
    data_create data_out cmsout inform= outform= rctform= stream indef noindef binary crlfeol \
    asciicrlf pwri_password= secretkey= secretkeyid= inkey= passin= keyopt= keyform= engine= \
    provider-path= provider= propquery= rand= writerand= originator= recip= cert...= wrap= \
    aes128-wrap aes192-wrap aes256-wrap des3-wrap debug_decrypt md= signer= certfile= cades \
    nodetach nocerts noattr nosmimecap receipt_request_all receipt_request_first \
    receipt_request_from= receipt_request_to= signer= content= no_content_verify no_attr_verify \
    nosigs noverify nointern cades verify_retcode CAfile= CApath= CAstore= no-CAfile no-CApath \
    no-CAstore keyid econtent_type= text certsout= to= from= subject= noout print nameopt= \
    receipt_request_print policy= purpose= verify_name= verify_depth= auth_level= attime= \
    verify_hostname= verify_email= verify_ip= ignore_critical issuer_checks crl_check \
    crl_check_all policy_check explicit_policy inhibit_any inhibit_map x509_strict extended_crl \
    use_deltas policy_print check_ss_sig trusted_first suiteB_128_only suiteB_128 suiteB_192 \
    partial_chain no_alt_chains no_check_time allow_proxy_certs \
    [crl] help verify in= inform= key= keyform= out= outform= dateopt= text hash hash_old \
    nameopt= issuer lastupdate nextupdate noout fingerprint crlnumber badsig gendelta= CApath= \
    CAfile= CAstore= no-CAfile no-CApath no-CAstore provider-path= provider= propquery= \
    [crl2pkcs7] help in= inform= nocrl certfile= out= outform= provider-path= provider= \
    propquery= \
    [dgst] help list engine= engine_impl passin= c r out= keyform= hex binary xoflen= d debug \
    sign= verify= prverify= sigopt= signature= hmac= mac= macopt= fips-fingerprint rand= \
    writerand= provider-path= provider= propquery= \
    [dhparam] help check dsaparam engine= in= inform= out= outform= text noout 2 3 5 rand= \
    writerand= provider-path= provider= propquery= \
    [dsa] help pvk-strong pvk-weak pvk-none engine= in= inform= pubin passin= out= outform= noout \
    text modulus pubout passout= provider-path= provider= propquery= \
    [dsaparam] help engine= in= inform= out= outform= text noout verbose genkey rand= writerand= \
    provider-path= provider= propquery= \
    [ec] help engine= in= inform= pubin passin= check param_enc= conv_form= out= outform= noout \
    text param_out pubout no_public passout= provider-path= provider= propquery= \
    [ecparam] help list_curves engine= genkey in= inform= out= outform= text noout param_enc= \
    check check_named no_seed name= conv_form= rand= writerand= provider-path= provider= \
    propquery= \
    [enc] help list ciphers e d p P engine= in= k= kfile= out= pass= v a base64 A nopad salt \
    nosalt debug bufsize= K= S= iv= md= iter= pbkdf2 none rand= writerand= provider-path= \
    provider= propquery= \
    [errstr] help \
    [gendsa] help engine= out= passout= rand= writerand= provider-path= provider= propquery= \
    verbose \
    [genpkey] help engine= paramfile= algorithm= quiet pkeyopt= config= out= outform= pass= \
    genparam text provider-path= provider= propquery= \
    [genrsa] help engine= 3 F4 f4 out= passout= primes= verbose traditional rand= writerand= \
    provider-path= provider= propquery= \
    [help] help \
    [info] help configdir enginesdir modulesdir dsoext dirnamesep listsep seeds cpusettings \
    [kdf] help kdfopt= cipher= digest= mac= keylen= out= binary provider-path= provider= \
    propquery= \
    [list] help 1 verbose select= commands standard-commands digest-commands digest-algorithms \
    kdf-algorithms random-instances random-generators mac-algorithms cipher-commands \
    cipher-algorithms encoders decoders key-managers key-exchange-algorithms kem-algorithms \
    signature-algorithms asymcipher-algorithms public-key-algorithms public-key-methods \
    store-loaders providers engines disabled options= objects provider-path= provider= propquery= \
    [mac] help macopt= cipher= digest= in= out= binary provider-path= provider= propquery= \
    [nseq] help in= toseq out= provider-path= provider= propquery= \
    [ocsp] help ignore_err CAfile= CApath= CAstore= no-CAfile no-CApath no-CAstore timeout= \
    resp_no_certs multi= no_certs badsig CA= nmin= nrequest= reqin= signer= sign_other= index= \
    ndays= rsigner= rkey= passin= rother= rmd= rsigopt= header= rcid= url= host= port= path= \
    proxy= no_proxy= out= noverify nonce no_nonce no_signature_verify resp_key_id no_cert_verify \
    text req_text resp_text no_chain no_cert_checks no_explicit trust_other no_intern respin= \
    VAfile= verify_other= cert= serial= validity_period= signkey= reqout= respout= issuer= \
    status_age= policy= purpose= verify_name= verify_depth= auth_level= attime= verify_hostname= \
    verify_email= verify_ip= ignore_critical issuer_checks crl_check crl_check_all policy_check \
    explicit_policy inhibit_any inhibit_map x509_strict extended_crl use_deltas policy_print \
    check_ss_sig trusted_first suiteB_128_only suiteB_128 suiteB_192 partial_chain no_alt_chains \
    no_check_time allow_proxy_certs provider-path= provider= propquery= \
    [passwd] help in= noverify stdin quiet table reverse salt= 6 5 apr1 1 aixmd5 rand= writerand= \
    provider-path= provider= propquery= \
    [pkcs12] help in= out= passin= passout= password= twopass nokeys nocerts noout legacy engine= \
    provider-path= provider= propquery= rand= writerand= info nomacver clcerts cacerts noenc \
    nodes export inkey= certfile= passcerts= chain untrusted= CAfile= CApath= CAstore= no-CAfile \
    no-CApath no-CAstore name= caname= CSP= LMK keyex keysig keypbe= certpbe= descert macalg= \
    iter= noiter nomaciter maciter nomac \
    [pkcs7] help engine= in= inform= outform= out= noout text print print_certs provider-path= \
    provider= propquery= \
    [pkcs8] help engine= v1= v2= v2prf= in= inform= passin= nocrypt out= outform= topk8 passout= \
    traditional iter= noiter scrypt scrypt_N= scrypt_r= scrypt_p= rand= writerand= provider-path= \
    provider= propquery= \
    [pkey] help engine= provider-path= provider= propquery= check pubcheck in= inform= passin= \
    pubin out= outform= passout= traditional pubout noout text text_pub ec_conv_form= \
    ec_param_enc= \
    [pkeyparam] help engine= check in= out= text noout provider-path= provider= propquery= \
    [pkeyutl] help engine= engine_impl sign verify encrypt decrypt derive config= in= rawin pubin \
    inkey= passin= peerkey= peerform= certin rev sigfile= keyform= out= asn1parse hexdump \
    verifyrecover digest= pkeyopt= pkeyopt_passin= kdf= kdflen= rand= writerand= provider-path= \
    provider= propquery= \
    [prime] help bits= checks= hex generate safe provider-path= provider= propquery= \
    [rand] help engine= out= base64 hex rand= writerand= provider-path= provider= propquery= \
    [rehash] help h compat old n v provider-path= provider= propquery= \
    [req] help engine= keygen_engine= in= inform= verify new config= section= utf8 nameopt= \
    reqopt= text x509 CA= CAkey= subj= subject multivalue-rdn days= set_serial= copy_extensions= \
    addext= extensions= reqexts= precert key= keyform= pubkey keyout= passin= passout= newkey= \
    pkeyopt= sigopt= vfyopt= out= outform= batch verbose noenc nodes noout newhdr modulus rand= \
    writerand= provider-path= provider= propquery= \
    [rsa] help check engine= in= inform= pubin RSAPublicKey_in passin= out= outform= pubout \
    RSAPublicKey_out passout= noout text modulus traditional pvk-strong pvk-weak pvk-none \
    provider-path= provider= propquery= \
    [rsautl] help sign verify encrypt decrypt engine= in= inkey= keyform= pubin certin rev \
    passin= out= raw pkcs x931 oaep asn1parse hexdump rand= writerand= provider-path= provider= \
    propquery= \
    [s_client] help engine= ssl_client_engine= ssl_config= ct noct ctlogfile= host= port= \
    connect= bind= proxy= proxy_user= proxy_pass= unix= 4 6 maxfraglen= max_send_frag= \
    split_send_frag= max_pipelines= read_buf= fallback_scsv cert= certform= cert_chain= \
    build_chain key= keyform= pass= verify= nameopt= CApath= CAfile= CAstore= no-CAfile no-CApath \
    no-CAstore requestCAfile= dane_tlsa_domain= dane_tlsa_rrdata= dane_ee_no_namechecks \
    psk_identity= psk= psk_session= name= reconnect sess_out= sess_in= crlf quiet ign_eof \
    no_ign_eof starttls= xmpphost= brief prexit showcerts debug msg msgfile= nbio_test state \
    keymatexport= keymatexportlen= security_debug security_debug_verbose trace keylogfile= \
    nocommands servername= noservername tlsextdebug ignore_unexpected_eof status serverinfo= \
    alpn= async nbio tls1 tls1_1 tls1_2 tls1_3 dtls timeout mtu= dtls1 dtls1_2 nextprotoneg= \
    early_data= enable_pha use_srtp= srpuser= srppass= srp_lateuser srp_moregroups srp_strength= \
    rand= writerand= no_ssl3 no_tls1 no_tls1_1 no_tls1_2 no_tls1_3 bugs no_comp comp no_ticket \
    serverpref legacy_renegotiation client_renegotiation no_renegotiation legacy_server_connect \
    no_resumption_on_reneg no_legacy_server_connect allow_no_dhe_kex prioritize_chacha strict \
    sigalgs= client_sigalgs= groups= curves= named_curve= cipher= ciphersuites= min_protocol= \
    max_protocol= record_padding= debug_broken_protocol no_middlebox no_etm policy= purpose= \
    verify_name= verify_depth= auth_level= attime= verify_hostname= verify_email= verify_ip= \
    ignore_critical issuer_checks crl_check crl_check_all policy_check explicit_policy \
    inhibit_any inhibit_map x509_strict extended_crl use_deltas policy_print check_ss_sig \
    trusted_first suiteB_128_only suiteB_128 suiteB_192 partial_chain no_alt_chains no_check_time \
    allow_proxy_certs CRL= crl_download CRLform= verify_return_error verify_quiet chainCAfile= \
    chainCApath= chainCAstore= verifyCAfile= verifyCApath= verifyCAstore= xkey= xcert= xchain= \
    xchain_build xcertform= xkeyform= provider-path= provider= propquery= \
    [s_server] help ssl_config= trace engine= port= accept= unix= unlink 4 6 context= CAfile= \
    CApath= CAstore= no-CAfile no-CApath no-CAstore nocert verify= Verify= nameopt= cert= cert2= \
    certform= cert_chain= build_chain serverinfo= key= key2= keyform= pass= dcert= dcertform= \
    dcert_chain= dkey= dkeyform= dpass= dhparam= servername= servername_fatal nbio_test crlf \
    quiet no_resume_ephemeral www WWW ignore_unexpected_eof tlsextdebug HTTP id_prefix= \
    keymatexport= keymatexportlen= CRL= CRLform= crl_download chainCAfile= chainCApath= \
    chainCAstore= verifyCAfile= verifyCApath= verifyCAstore= no_cache ext_cache \
    verify_return_error verify_quiet ign_eof no_ign_eof status status_verbose status_timeout= \
    status_url= proxy= no_proxy= status_file= security_debug security_debug_verbose brief rev \
    debug msg msgfile= state async max_pipelines= naccept= keylogfile= nbio timeout mtu= \
    read_buf= split_send_frag= max_send_frag= psk_identity= psk_hint= psk= psk_session= srpvfile= \
    srpuserseed= max_early_data= recv_max_early_data= early_data num_tickets= anti_replay \
    no_anti_replay http_server_binmode no_ca_names stateless tls1 tls1_1 tls1_2 tls1_3 dtls \
    listen dtls1 dtls1_2 use_srtp= no_dhe nextprotoneg= alpn= sendfile rand= writerand= no_ssl3 \
    no_tls1 no_tls1_1 no_tls1_2 no_tls1_3 bugs no_comp comp no_ticket serverpref \
    legacy_renegotiation client_renegotiation no_renegotiation legacy_server_connect \
    no_resumption_on_reneg no_legacy_server_connect allow_no_dhe_kex prioritize_chacha strict \
    sigalgs= client_sigalgs= groups= curves= named_curve= cipher= ciphersuites= min_protocol= \
    max_protocol= record_padding= debug_broken_protocol no_middlebox no_etm policy= purpose= \
    verify_name= verify_depth= auth_level= attime= verify_hostname= verify_email= verify_ip= \
    ignore_critical issuer_checks crl_check crl_check_all policy_check explicit_policy \
    inhibit_any inhibit_map x509_strict extended_crl use_deltas policy_print check_ss_sig \
    trusted_first suiteB_128_only suiteB_128 suiteB_192 partial_chain no_alt_chains no_check_time \
    allow_proxy_certs xkey= xcert= xchain= xchain_build xcertform= xkeyform= provider-path= \
    provider= propquery= \
    [s_time] help connect= new reuse bugs cipher= ciphersuites= tls1 tls1_1 tls1_2 tls1_3 verify= \
    time= www= nameopt= cert= key= cafile= CAfile= CApath= CAstore= no-CAfile no-CApath \
    no-CAstore provider-path= provider= propquery= \
    [sess_id] help context= in= inform= out= outform= text cert noout \
    [smime] help in= inform= out= outform= inkey= keyform= engine= stream indef noindef config= \
    encrypt decrypt sign resign verify passin= md= pk7out nointern nodetach noattr binary signer= \
    content= nocerts nosigs noverify certfile= recip= to= from= subject= text nosmimecap CApath= \
    CAfile= CAstore= no-CAfile no-CApath no-CAstore nochain crlfeol rand= writerand= policy= \
    purpose= verify_name= verify_depth= auth_level= attime= verify_hostname= verify_email= \
    verify_ip= ignore_critical issuer_checks crl_check crl_check_all policy_check explicit_policy \
    inhibit_any inhibit_map x509_strict extended_crl use_deltas policy_print check_ss_sig \
    trusted_first suiteB_128_only suiteB_128 suiteB_192 partial_chain no_alt_chains no_check_time \
    allow_proxy_certs provider-path= provider= propquery= \
    [speed] help mb mr multi= async_jobs= engine= primes= evp= hmac= cmac= decrypt aead elapsed \
    seconds= bytes= misalign= rand= writerand= provider-path= provider= propquery= \
    [spkac] help spksect= engine= in= key= keyform= passin= challenge= spkac= digest= out= noout \
    pubkey verify provider-path= provider= propquery= \
    [srp] help verbose config= name= engine= add modify delete list srpvfile= gn= userinfo= \
    passin= passout= rand= writerand= provider-path= provider= propquery= \
    [storeutl] help engine= certs keys crls subject= issuer= serial= fingerprint= alias= r \
    passin= out= text noout provider-path= provider= propquery= \
    [ts] help config= section= engine= inkey= signer= chain= CAfile= CApath= CAstore= untrusted= \
    token_in token_out passin= query data= digest= queryfile= cert in= verify reply tspolicy= \
    no_nonce out= text rand= writerand= policy= purpose= verify_name= verify_depth= auth_level= \
    attime= verify_hostname= verify_email= verify_ip= ignore_critical issuer_checks crl_check \
    crl_check_all policy_check explicit_policy inhibit_any inhibit_map x509_strict extended_crl \
    use_deltas policy_print check_ss_sig trusted_first suiteB_128_only suiteB_128 suiteB_192 \
    partial_chain no_alt_chains no_check_time allow_proxy_certs provider-path= provider= \
    propquery= \
    [verify] help engine= verbose nameopt= trusted= CAfile= CApath= CAstore= no-CAfile no-CApath \
    no-CAstore untrusted= CRLfile= crl_download show_chain policy= purpose= verify_name= \
    verify_depth= auth_level= attime= verify_hostname= verify_email= verify_ip= ignore_critical \
    issuer_checks crl_check crl_check_all policy_check explicit_policy inhibit_any inhibit_map \
    x509_strict extended_crl use_deltas policy_print check_ss_sig trusted_first suiteB_128_only \
    suiteB_128 suiteB_192 partial_chain no_alt_chains no_check_time allow_proxy_certs vfyopt= \
    provider-path= provider= propquery= \
    [version] help a b d e m f o p r v c \
    [x509] help in= passin= new x509toreq req copy_extensions= inform= vfyopt= key= signkey= \
    keyform= out= outform= nocert noout text dateopt= certopt= fingerprint alias serial startdate \
    enddate dates subject issuer nameopt= email hash subject_hash subject_hash_old issuer_hash \
    issuer_hash_old ext= ocspid ocsp_uri purpose pubkey modulus checkend= checkhost= checkemail= \
    checkip= set_serial= next_serial days= preserve_dates subj= force_pubkey= clrext extfile= \
    extensions= sigopt= badsig CA= CAform= CAkey= CAkeyform= CAserial= CAcreateserial trustout \
    setalias= clrtrust addtrust= clrreject addreject= rand= writerand= engine= provider-path= \
    provider= propquery=";

/// The subcommands that read any option they do not have as a cipher or digest name.
const ANY_ALGORITHM: &[&str] = &[
    "cms", "crl", "dgst", "dsa", "ec", "enc", "gendsa", "genpkey", "genrsa", "pkcs12", "pkey",
    "req", "rsa", "smime", "storeutl", "ts", "x509",
];

/// Digest names beyond the digest subcommands.
pub(crate) const DIGESTS: Words = Words("ripemd ripemd160 md5-sha1 whirlpool mdc2 sm3");

/// True for a cipher or digest name (`sha256`, `aes-256-cbc`, `des3`).
fn is_algorithm(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let digest_command = OPENSSL_COMMANDS
        .iter()
        .skip_while(|c| *c != "md4")
        .any(|c| c == name);
    digest_command
        || DIGESTS.contains(name.as_str())
        || OPENSSL_CIPHERS.iter().any(|c| name.starts_with(c))
}

/// The options of the subcommand `sub` in [`OPTIONS`], when it has a section there.
fn section(sub: &str) -> Option<&'static str> {
    if sub.is_empty() || sub.contains(['[', ']']) {
        return None;
    }
    let bytes = OPTIONS.as_bytes();
    memchr::memmem::find_iter(bytes, sub.as_bytes()).find_map(|at| {
        let end = at + sub.len();
        if at == 0 || bytes[at - 1] != b'[' || bytes.get(end) != Some(&b']') {
            return None;
        }
        let rest = OPTIONS.get(end + 1..)?;
        Some(rest[..rest.find('[').unwrap_or(rest.len())].trim())
    })
}

/// The subcommands of [`OPTIONS`] with their options, in order.
#[cfg(test)]
fn subcommands() -> impl Iterator<Item = (&'static str, &'static str)> {
    OPTIONS
        .split('[')
        .skip(1)
        .filter_map(|section| section.split_once(']'))
        .map(|(sub, options)| (sub, options.trim()))
}

/// The option list a subcommand reads: its own, or `dgst`'s for a digest name and `enc`'s for
/// a cipher name, `base64` and `zlib`.
fn options_of(sub: &str) -> &'static str {
    let table = |name: &str| section(name).unwrap_or("");
    if section(sub).is_some() {
        table(sub)
    } else if OPENSSL_CIPHERS.iter().any(|c| sub.starts_with(c))
        || ["base64", "zlib"].contains(&sub)
    {
        table("enc")
    } else {
        table("dgst")
    }
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const OPENSSL_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["version"],
        &["version", "-a"],
        &["x509", "-in", "c.pem", "-noout", "-text"],
        &["x509", "--in=c.pem", "-noout", "-fingerprint", "-sha256"],
        &[
            "s_client",
            "-connect",
            "example.com:443",
            "-servername",
            "example.com",
        ],
        &["dgst", "-sha256", "f"],
        &["dgst", "-sha256", "-hmac", "key", "f", "-x"],
        &["sha256", "-hex", "f"],
        &["aes-256-cbc", "-d", "-in", "x", "-pass", "file:k"],
        &[
            "enc",
            "-aes-256-cbc",
            "-pbkdf2",
            "-in",
            "f",
            "-out",
            "f.enc",
            "-pass",
            "pass:x",
        ],
        &["base64", "-d", "-in", "f"],
        &["req", "-new", "-key", "k.pem", "-subj", "/CN=x"],
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem", "-out", "c.pem",
            "-days", "1", "-subj", "/CN=x", "-sha256",
        ],
        &["rand", "-hex", "16"],
        &["genrsa", "-out", "k.pem", "2048"],
        &["verify", "-CAfile", "ca.pem", "c.pem"],
        &[
            "pkcs12", "-export", "-in", "c.pem", "-inkey", "k.pem", "-out", "p.p12", "-passout",
            "pass:",
        ],
        &["x509", "-in", "-unknown-looking-value", "-noout"],
    ],
    refuse: &[
        &[],
        &["engine", "/abs/x.so"],
        &["engine", "-t", "dynamic", "-pre", "SO_PATH:/abs/x.so"],
        &["s_client", "-ssl_client_engine", "x", "-connect", "h:443"],
        &["s_client", "--engine=/abs/x.so"],
        &["req", "-config", "x.cnf"],
        &["req", "--config=x.cnf", "-new"],
        &["ca", "-conf", "x.cnf"],
        &[
            "x509",
            "-in",
            "c.pem",
            "-provider-path",
            "/abs",
            "-provider",
            "x",
        ],
        &["dgst", "-provider=legacy", "f"],
        &["pkey", "-in", "org.openssl.engine:x:y"],
        &["pkey", "-keyform", "ENGINE", "-in", "k"],
        &["fipsinstall", "-module", "/abs/x.so"],
        &["future-command"],
        &["x509", "-some-future-option", "-in", "c.pem"],
        &["s_client", "-connect", "h:443", "-zzz"],
        &["dgst", "-notadigest", "f"],
        &["rand", "-sha256", "16"],
    ],
};

/// openssl: a known subcommand first (`OPENSSL_COMMANDS`), no argument naming an engine, a
/// provider or a configuration file, and only the subcommand's own options.
pub fn check_openssl(args: &[String]) -> Result<(), String> {
    let reject = || Err("openssl engine, provider or configuration option".to_string());
    let Some(sub) = args.first().filter(|sub| {
        OPENSSL_COMMANDS.contains(sub.as_str())
            || OPENSSL_CIPHERS.iter().any(|c| sub.starts_with(c))
    }) else {
        return Err(format!(
            "openssl without a known subcommand (it reads commands from stdin without one; \
             accepted: {}, and cipher names)",
            OPENSSL_COMMANDS.iter().collect::<Vec<_>>().join(", ")
        ));
    };
    for arg in args {
        let lower = arg.to_ascii_lowercase();
        if lower.contains("engine") || lower.contains("provider") {
            return reject();
        }
        let name = arg.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        if arg.starts_with('-') && ["config", "conf"].contains(&name) {
            return reject();
        }
    }
    let options: Vec<&str> = options_of(sub).split(' ').collect();
    let any_algorithm = ANY_ALGORITHM.contains(&sub.as_str()) || section(sub).is_none();
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--" || arg == "-" || !arg.starts_with('-') {
            break;
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, attached) = match body.split_once('=') {
            Some((n, _)) => (n, true),
            None => (body, false),
        };
        if options.contains(&name) {
            continue;
        }
        if options.iter().any(|o| o.strip_suffix('=') == Some(name)) {
            if !attached {
                rest.next();
            }
            continue;
        }
        if any_algorithm && !attached && is_algorithm(name) {
            continue;
        }
        return Err(crate::policy::trusted::rules::not_known(&format!(
            "openssl option -{name}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_table_is_well_formed() {
        use crate::policy::trusted::words::plain_name;
        let mut seen = std::collections::HashSet::new();
        assert_eq!(subcommands().count(), OPTIONS.matches('[').count());
        for (sub, options) in subcommands() {
            assert!(plain_name(sub).is_some() && seen.insert(sub), "[{sub}]");
            assert_eq!(section(sub), Some(options), "[{sub}]");
            for option in options.split(' ') {
                let name = option.strip_suffix('=').unwrap_or(option);
                assert!(plain_name(name).is_some(), "[{sub}] {option:?}");
            }
        }
    }

    /// Every option of the table is read as the subcommand's own: alone, or with its value.
    #[test]
    fn every_listed_option_is_known() {
        for (sub, options) in subcommands() {
            for option in options.split(' ') {
                let (name, value) = match option.strip_suffix('=') {
                    Some(name) => (name, Some("v")),
                    None => (option, None),
                };
                let args: Vec<String> = [sub, &format!("-{name}")]
                    .into_iter()
                    .chain(value)
                    .map(String::from)
                    .collect();
                let got = check_openssl(&args);
                let loads = name.contains("engine")
                    || name.contains("provider")
                    || ["config", "conf"].contains(&name);
                assert_eq!(got.is_ok(), !loads, "{args:?}: {got:?}");
                assert!(
                    got.as_ref().err().is_none_or(|e| !e.contains("not known")),
                    "{args:?}: {got:?}"
                );
            }
        }
    }
}
