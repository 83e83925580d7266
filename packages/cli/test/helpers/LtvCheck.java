// iText 5's LtvVerifier (Debian's libitext5-java), a PAdES long-term validator not written here: it checks the newest
// document timestamp at the current time (faketime moves it), then each earlier signature at the time of the
// timestamp that follows it, with the revocation data of the file's DSS and nothing fetched. Usage:
// java LtvCheck <file.pdf> <root.pem>...; prints each verification and "LTV OK", or fails with iText's reason.
import com.itextpdf.text.pdf.PdfReader;
import com.itextpdf.text.pdf.security.EncryptionAlgorithms;
import com.itextpdf.text.pdf.security.LtvVerification;
import com.itextpdf.text.pdf.security.LtvVerifier;
import com.itextpdf.text.pdf.security.VerificationOK;
import java.io.FileInputStream;
import java.security.KeyStore;
import java.security.Security;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

public class LtvCheck {
  public static void main(String[] args) throws Exception {
    Security.addProvider(new BouncyCastleProvider());
    // iText 5 knows ECDSA by its key's OID alone; CMS (RFC 5753) names the signature algorithm, ecdsa-with-SHA256.
    // Its own extension point maps that name: no validation step changes.
    EncryptionAlgorithms.addAlgorithm("1.2.840.10045.4.3.2", "ECDSA");
    KeyStore roots = KeyStore.getInstance(KeyStore.getDefaultType());
    roots.load(null, null);
    CertificateFactory factory = CertificateFactory.getInstance("X.509");
    for (int i = 1; i < args.length; i++) {
      try (FileInputStream in = new FileInputStream(args[i])) {
        roots.setCertificateEntry("root" + i, (X509Certificate) factory.generateCertificate(in));
      }
    }
    LtvVerifier verifier = new LtvVerifier(new PdfReader(args[0]));
    verifier.setRootStore(roots);
    verifier.setCertificateOption(LtvVerification.CertificateOption.WHOLE_CHAIN);
    verifier.setVerifyRootCertificate(false);
    verifier.setOnlineCheckingAllowed(false);
    for (VerificationOK ok : verifier.verify(null)) System.out.println(ok);
    System.out.println("LTV OK");
  }
}
