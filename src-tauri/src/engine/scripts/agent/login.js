// Login: finding a login form's username, password and submit controls, and reading
// where an attempt stands (an error shown, the password field gone, URL or text changed).
  const ERROR_TEXT = /(invalid|incorrect|wrong|unknown|bad)\s+(user\s*name|username|e-?mail|password|credentials|login)|(login|sign[- ]?in|authentication)\s+(failed|error)|not\s+recogni[sz]ed|try again/i;
  const SUBMIT_TEXT = /^(log\s*in|login|sign\s*in|signin|submit|continue|next|enter|go)$/i;
  function visibleMatches(selector) { return queryAll(selector, 0).filter(isVisible); }
  // Finds the username, password and submit controls (or uses the given selectors).
  function loginForm(args) {
    useBase(args.base);
    const pick = (selector, what) => {
      if (!selector) return null;
      const [found] = visibleMatches(selector);
      if (!found) throw new AgentError('E_NOT_FOUND', 'no visible ' + what + ' matches ' + JSON.stringify(selector), { selector });
      return found;
    };
    const password = pick(args.password_selector, 'password field') || visibleMatches('input[type=password]')[0];
    if (!password) throw new AgentError('E_NOT_FOUND', 'no visible password field on this page; pass password_selector');
    const scope = password.form || document;
    const candidates = Array.from(scope.querySelectorAll('input')).filter((input) => isVisible(input) && input !== password
      && ['', 'text', 'email', 'tel'].includes((input.getAttribute('type') || '').toLowerCase()));
    const scored = candidates.map((input) => {
      const hint = [input.autocomplete, input.name, input.id, input.getAttribute('placeholder'), nameOf(input, 'textbox')].join(' ').toLowerCase();
      let score = 0;
      if (/username|email|login|user|account|phone/.test(hint)) score += 2;
      if (input.compareDocumentPosition(password) & Node.DOCUMENT_POSITION_FOLLOWING) score += 1;
      return { input, score };
    }).sort((a, b) => b.score - a.score);
    const username = pick(args.username_selector, 'username field') || (scored[0] && scored[0].input) || null;
    let submit = pick(args.submit_selector, 'submit control');
    if (!submit) {
      const buttons = Array.from(scope.querySelectorAll('button, input[type=submit], input[type=image], [role=button]')).filter(isVisible);
      submit = buttons.find((button) => (button.type || '').toLowerCase() === 'submit' && button.localName !== 'a')
        || buttons.find((button) => SUBMIT_TEXT.test(clean(button.innerText || button.value || '', 40))) || null;
    }
    return { password: refFor(password), username: username ? refFor(username) : null, submit: submit ? refFor(submit) : null,
      text_length: (document.body ? document.body.innerText : '').length, url: location.href, next_ref: refs.next };
  }
  // Where a login attempt stands: error shown, password field gone, URL or text changed.
  function loginState(args) {
    const password = elementFor(args.password);
    const text = document.body ? document.body.innerText : '';
    let error = null;
    if (args.error_selector) {
      const [shown] = visibleMatches(args.error_selector);
      if (shown) error = clean(shown.innerText, 200);
    }
    if (!error) {
      const match = text.match(ERROR_TEXT);
      if (match && !(args.errors_before || []).includes(match[0].toLowerCase())) {
        // The whole line the message stands in, as the person would read it.
        const line = text.split('\n').find((candidate) => candidate.includes(match[0]));
        error = clean(line || match[0], 200);
      }
    }
    return {
      url: location.href,
      password_present: !!(password && isVisible(password)),
      success_selector: args.success_selector ? visibleMatches(args.success_selector).length > 0 : false,
      text_length: text.length,
      error,
      errors_now: (text.match(new RegExp(ERROR_TEXT.source, 'gi')) || []).map((found) => found.toLowerCase()),
    };
  }
