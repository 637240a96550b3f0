"""The README's pictures: the sign-in mail's HTML part and the hosted page its link opens, from a
real `postern serve` on the embedded defaults, rendered in headless Chromium. Run by doc-images.sh.

It fails only when either cannot be rendered. The PNGs go to docs/images/ only with
UPDATE_DOC_IMAGES=1 (`UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh`); otherwise they are
made in E2E_WORK and compared with the committed ones, and a difference is only reported (the
code in each mail differs, so the bytes always do).
"""
import os
import shutil

from postern_daemon import Daemon, action_link, start_chromium, stop_chromium, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGES = os.path.join(ROOT, "docs", "images")
ADDRESS = "ann@example.com"


def test_the_sign_in_mail_and_its_page_render():
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "daemon")
    driver, group = start_chromium(work)
    try:
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": ADDRESS})
        assert status == 202, (status, answer)
        mail = daemon.mailbox.next(ADDRESS)
        html = mail.get_body(("html",))
        assert html is not None, "the sign-in mail has no HTML part"
        mail_file = os.path.join(work, "mail.html")
        with open(mail_file, "w") as f:
            f.write(html.get_content())

        made = {}
        # The mail as a mail program shows its HTML part (no network: everything is inline).
        driver.get("file://" + mail_file)
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the mail to load")
        text = driver.find_element("tag name", "body").text
        assert ADDRESS in text or "Postern" in text, text[:500]
        made["sign-in-mail.png"] = os.path.join(work, "sign-in-mail.png")
        assert driver.save_screenshot(made["sign-in-mail.png"])

        # The hosted page the link opens: a GET shows the sign-in's 6-digit code and consumes nothing.
        driver.get(action_link(mail, daemon.public_url, "signIn"))
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the page to load")
        codes = driver.find_elements("id", "code")
        assert codes and len(codes[0].text.strip()) == 6, driver.page_source[:500]
        made["sign-in-page.png"] = os.path.join(work, "sign-in-page.png")
        assert driver.save_screenshot(made["sign-in-page.png"])
    finally:
        stop_chromium(driver, group)
        assert daemon.stop() == 0

    for name, path in made.items():
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name} is no PNG"
        committed = os.path.join(IMAGES, name)
        if os.environ.get("UPDATE_DOC_IMAGES") == "1":
            os.makedirs(IMAGES, exist_ok=True)
            shutil.copyfile(path, committed)
            print(f"\nwrote {committed}")
        elif not os.path.exists(committed):
            print(f"\n{committed} is missing: run UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh")
        elif open(committed, "rb").read() != open(path, "rb").read():
            print(f"\n{name} renders differently from docs/images/{name} (each mail's code differs; "
                  "UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh writes it)")
