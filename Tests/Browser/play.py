"""Plays pages of Fixtures/browser/player.html in headless Chromium (Debian's, driven by Playwright).

Usage: play.py CHROMIUM SECONDS TIMEOUT URL...
Prints one JSON object per URL, in order: the page's playerState (time reached, error, ended) and its last console
lines. Every page plays at once, in one browser.
"""

import asyncio
import json
import os
import sys

from playwright.async_api import async_playwright


async def play(browser, url, seconds, timeout):
    page = await browser.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text))
    page.on("pageerror", lambda error: console.append("page error: %s" % error))
    state = None
    try:
        await page.goto(url)
        await page.wait_for_function(
            "s => window.playerState && (window.playerState.error || window.playerState.time >= s)",
            arg=seconds,
            timeout=timeout * 1000,
        )
    except Exception as error:  # a timeout: report how far it got
        console.append("wait: %s" % str(error).splitlines()[0])
    finally:
        try:
            state = await page.evaluate("window.playerState")
        except Exception as error:
            console.append("state: %s" % error)
    return {"url": url, "state": state, "console": console[-8:]}


async def main():
    chromium, seconds, timeout, urls = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
    async with async_playwright() as playwright:
        args = ["--autoplay-policy=no-user-gesture-required", "--no-sandbox", "--disable-gpu"]
        # A test's own certificate, trusted by the hash of its public key (and nothing else is).
        spki = os.environ.get("HLSCACHE_TEST_SPKI")
        if spki:
            args.append("--ignore-certificate-errors-spki-list=" + spki)
        # Names of the tests' own that resolve to loopback: unlike 127.0.0.1 itself, not secure by their name alone.
        rules = os.environ.get("HLSCACHE_TEST_HOST_RULES")
        if rules:
            args.append("--host-resolver-rules=" + rules)
        browser = await playwright.chromium.launch(executable_path=chromium, args=args)
        results = await asyncio.gather(*(play(browser, url, seconds, timeout) for url in urls))
        await browser.close()
    for result in results:
        print(json.dumps(result))


asyncio.run(main())
