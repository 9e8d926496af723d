;;; arcology-oracle-answers-test.el --- ERT tests of the answers and summaries buffers -*- lexical-binding: t -*-

;;; Commentary:

;; The keys of the answers and summaries buffers, pressed as keys
;; (`execute-kbd-macro'), against the daemon of arcology-oracle-test.el:
;; n and p move between entries and edit nothing, g asks again, RET
;; follows a source or goes back to the heading asked about, q hides
;; the window, e makes the buffer editable and C-x C-q reads again.
;; And the package's user errors, signalled through a real command
;; loop, name no special form in *Messages*.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-test-support)
(require 'arcology-oracle-test)

(defun arcology-oracle-answers-test--keys (keys)
  "Press KEYS (a `kbd' string) in the selected window."
  (execute-kbd-macro (kbd keys)))

(defun arcology-oracle-answers-test--line ()
  "Return the text of point's line in the current buffer."
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun arcology-oracle-answers-test--count (regexp)
  "Return how many lines of the current buffer match REGEXP."
  (cl-count-if (lambda (l) (string-match-p regexp l)) (split-string (buffer-string) "\n")))

(ert-deftest arcology-oracle-answers-test-keys-in-the-answers ()
  "In the answers buffer n and p move between answers without editing, g asks
again, RET goes to a source or back to the heading asked from, q hides it, e edits."
  (arcology-oracle-test--with-daemon
    (let ((note (arcology-oracle-test--visit "bread-hydration.org")))
      (arcology-oracle-test--goto-heading "Autolyse")
      (arcology-oracle-ask "What is hydration?")
      (arcology-oracle-test--settled 30)
      (arcology-oracle-ask "What is autolyse?")
      (arcology-oracle-test--settled 30)
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (should buffer-read-only)
      (let ((before (buffer-string)))
        (goto-char (point-min))
        (arcology-oracle-answers-test--keys "n")
        (should (equal (arcology-oracle-answers-test--line) "* What is autolyse?"))
        (arcology-oracle-answers-test--keys "p")
        (should (equal (arcology-oracle-answers-test--line) "* What is hydration?"))
        (should (equal (buffer-string) before)))
      ;; g on the first answer asks its question again, below the others.
      (arcology-oracle-answers-test--keys "g")
      (arcology-oracle-test--settled 30)
      (should (= 2 (arcology-oracle-answers-test--count "\\`\\* What is hydration\\?\\'")))
      (should (equal (car (last (seq-filter (lambda (l) (string-prefix-p "* " l))
                                            (split-string (buffer-string) "\n"))))
                     "* What is hydration?"))
      (should (= 3 (arcology-oracle-answers-test--count "\\`\\*\\* Sources")))
      ;; RET on a source opens its note; RET on the heading goes back to Autolyse.
      (goto-char (point-min))
      (search-forward "- [1] [[")
      (arcology-oracle-answers-test--keys "RET")
      (should-not (equal (buffer-name) arcology-oracle-answer-buffer-name))
      (should buffer-file-name)
      (push (current-buffer) arcology-oracle-test--buffers)
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "RET")
      (should (eq (current-buffer) note))
      (should (equal (arcology-oracle-answers-test--line) "** Autolyse"))
      ;; e: letters insert; C-x C-q: read-only again, with the keys.
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "e")
      (should-not buffer-read-only)
      (arcology-oracle-answers-test--keys "n")
      (should (string-prefix-p "n* What is hydration?" (buffer-string)))
      (arcology-oracle-answers-test--keys "C-x C-q")
      (should buffer-read-only)
      (arcology-oracle-answers-test--keys "n")
      (should (equal (arcology-oracle-answers-test--line) "* What is autolyse?"))
      (arcology-oracle-answers-test--keys "q")
      (should-not (get-buffer-window arcology-oracle-answer-buffer-name)))))

(ert-deftest arcology-oracle-answers-test-keys-in-the-summaries ()
  "In the summaries buffer n says when there is no more, g summarizes again on top,
RET goes back to the heading summarized."
  (arcology-oracle-test--with-daemon
    (let ((note (arcology-oracle-test--visit "bread-hydration.org")))
      (arcology-oracle-test--goto-heading "Baker's percentages")
      (arcology-oracle-summarize)
      (arcology-oracle-test--settled 30)
      (select-window (get-buffer-window arcology-oracle-summary-buffer-name))
      (should buffer-read-only)
      (goto-char (point-min))
      (let ((before (buffer-string)))
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle-answers-test--keys "n")
          (should (member "No more summaries" messages)))
        (should (= (point) (point-min)))
        (should (equal (buffer-string) before)))
      (arcology-oracle-answers-test--keys "g")
      (arcology-oracle-test--settled 30)
      (should (= 2 (arcology-oracle-answers-test--count "\\`\\* Summary of Baker's percentages\\'")))
      (should (string-match-p "\\`\\* Summary of Baker's percentages\n.*cached" (buffer-string)))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "n")
      (should (equal (arcology-oracle-answers-test--line) "* Summary of Baker's percentages"))
      (should (> (point) (point-min)))
      (arcology-oracle-answers-test--keys "RET")
      (should (eq (current-buffer) note))
      (should (equal (arcology-oracle-answers-test--line) "* Baker's percentages")))))

;; As the three lists (arcology-oracle-links-test-lists-open-on-their-first-entry).
(ert-deftest arcology-oracle-answers-test-never-look-modified ()
  "An answer or a summary streamed in showed \"**\" in the mode line, as a file with
unsaved edits: neither buffer is a file, both stay unmodified after each insert.
Edited by the user (e), the buffer is modified, and an answer coming then keeps it so.
A note no other test summarizes: the daemon keeps a summary for the whole run, and
a test that counts the cached ones would find this one's."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "coffee-brewing.org")
    (arcology-oracle-test--goto-heading "Grinder settings")
    (arcology-oracle-ask "How fine should I grind?")
    (arcology-oracle-test--settled 30)
    (arcology-oracle-summarize)
    (arcology-oracle-test--settled 30)
    (dolist (name (list arcology-oracle-answer-buffer-name arcology-oracle-summary-buffer-name))
      (with-current-buffer name
        (should (string-match-p "^\\*\\* Sources" (buffer-string)))
        (should (equal (list name (buffer-modified-p)) (list name nil)))))
    (switch-to-buffer arcology-oracle-answer-buffer-name)
    (goto-char (point-max))
    (arcology-oracle-answers-test--keys "e x")
    (should (buffer-modified-p))
    (switch-to-buffer "coffee-brewing.org")
    (arcology-oracle-ask "How long does the bloom take?")
    (arcology-oracle-test--settled 30)
    (with-current-buffer arcology-oracle-answer-buffer-name
      (should (= 2 (arcology-oracle-answers-test--count "\\`\\*\\* Sources")))
      (should (buffer-modified-p))
      (read-only-mode 1))))

(ert-deftest arcology-oracle-answers-test-streams-while-read-only ()
  "An answer streams into the read-only answers buffer, and g works on it after."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (progn
          (arcology-oracle-ask "How do I feed the starter?")
          (with-current-buffer arcology-oracle-answer-buffer-name
            (should buffer-read-only)
            (arcology-oracle-test--wait
             (lambda () (> (buffer-size) (length "* How do I feed the starter?\n")))
             20 "the first token"))
          (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
          (with-current-buffer arcology-oracle-answer-buffer-name
            (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                        20 "the sources")
            (should buffer-read-only)
            (should-not (string-match-p "Failed" (buffer-string)))))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

(ert-deftest arcology-oracle-answers-test-stop-an-answer-coming ()
  "C-c C-k in the answers buffer stops the answer still coming: the text so far,
then [Stopped] and its sources, and nothing more arrives.  (Nothing stopped one:
the README's C-g did nothing to a question already sent, which waited up to
`arcology-oracle-llm-timeout', 300 s, for a slow model.)"
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (progn
          (arcology-oracle-ask "How do I feed the starter?")
          (with-current-buffer arcology-oracle-answer-buffer-name
            (arcology-oracle-test--wait
             (lambda () (> (buffer-size) (length "* How do I feed the starter?\n")))
             20 "the first token")
            (should (eq (key-binding (kbd "C-c C-k")) 'arcology-oracle-stop))
            (arcology-oracle-test--capturing-messages messages
              (call-interactively (key-binding (kbd "C-c C-k")))
              (should (member "Stopped 1 answer" messages)))
            (should (string-match-p "\n\n\\[Stopped\\]\n\n\\*\\* Sources\n- \\[1\\] \\[\\[id:" (buffer-string)))
            (arcology-oracle-test--settled 5)
            (let ((stopped (buffer-string)))
              ;; The model goes on if nobody tells it: here it would send the rest now.
              (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
              (accept-process-output nil 1)
              (should (equal (buffer-string) stopped))
              (should-not (string-match-p "Failed" stopped))))
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-stop)
            (should (member "No answer is coming" messages))))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

(ert-deftest arcology-oracle-answers-test-stop-before-the-first-question-is-sent ()
  "C-c o k right after a session's first question, while Emacs still asks the
daemon where the notes are (/status, once a session): the question is never sent.
It said \"No answer is coming\" and the answer streamed in all the same."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (should-not (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs))
    (arcology-oracle-ask "How do I feed the starter?")
    (arcology-oracle-test--capturing-messages messages
      (arcology-oracle-stop)
      (should (member "Stopped 1 answer" messages)))
    ;; The roam directory's answer comes; nothing may be asked after it.
    (arcology-oracle-test--wait
     (lambda () (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)) 20 "the roam directory")
    (should-not arcology-oracle--answering)
    (with-current-buffer arcology-oracle-answer-buffer-name
      (should (string-match-p "^\\[Stopped\\]$" (buffer-string)))
      (should-not (string-match-p "Sources" (buffer-string))))))

(ert-deftest arcology-oracle-answers-test-stop-a-file-summary-before-it-is-sent ()
  "C-c o k right after a session's first summary of a file with no node, while
Emacs still asks the daemon where the notes are: the summary is never asked for.
It said \"No answer is coming\" and the summary streamed in all the same."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "inbox.org")
    (should-not (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs))
    (arcology-oracle-summarize)
    (arcology-oracle-test--capturing-messages messages
      (arcology-oracle-stop)
      (should (member "Stopped 1 answer" messages)))
    (arcology-oracle-test--wait
     (lambda () (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)) 20 "the roam directory")
    (should-not arcology-oracle--answering)
    (let ((summaries (get-buffer arcology-oracle-summary-buffer-name)))
      (should-not (and summaries (with-current-buffer summaries
                                   (string-match-p "Summary of" (buffer-string))))))))

(ert-deftest arcology-oracle-answers-test-stop-a-conversation-before-it-is-sent ()
  "C-c o k while a session's first conversation waits for the roam directory:
nothing is sent, nothing inserted."
  (arcology-oracle-test--with-daemon
    (with-temp-buffer
      (org-mode)
      (insert "* Sourdough :conversation:\n** Me\nHow often should I feed a starter?\n")
      (let ((before (buffer-string)))
        (arcology-oracle-converse)
        (funcall (lookup-key arcology-oracle-command-map (kbd "k")))
        (arcology-oracle-test--wait
         (lambda () (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)) 20 "the roam directory")
        (should-not arcology-oracle--answering)
        (should (equal (buffer-string) before))))))

(ert-deftest arcology-oracle-answers-test-stop-a-conversation-waiting ()
  "C-c o k while a conversation waits for its answer: nothing is inserted."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (with-temp-buffer
          (org-mode)
          (insert "* Sourdough :conversation:\n** Me\nHow often should I feed a starter?\n")
          (let ((before (buffer-string)))
            (arcology-oracle-converse)
            (arcology-oracle-test--wait (lambda () arcology-oracle--answering) 20 "the question to be sent")
            (funcall (lookup-key arcology-oracle-command-map (kbd "k")))
            (arcology-oracle-test--settled 5)
            (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
            (accept-process-output nil 1)
            (should (equal (buffer-string) before))
            (should-not arcology-oracle--answering)))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

(ert-deftest arcology-oracle-answers-test-a-conversation-s-buffer-killed-while-waiting ()
  "The note killed (C-x k) while the model thinks: the answer goes to the kill ring and
the echo area says so.  It was dropped without a word."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (let ((note (generate-new-buffer "chat.org"))
              (dir nil))
          ;; The roam directory known: the question is sent at once, to the daemon.
          (arcology-oracle--with-roam-dir (lambda (d) (setq dir (or d t))))
          (arcology-oracle-test--wait (lambda () dir) 20 "the roam directory")
          (with-current-buffer note
            (org-mode)
            (insert "* Sourdough :conversation:\n** Me\nHow often should I feed a starter?\n")
            (arcology-oracle-converse))
          (arcology-oracle-test--wait (lambda () arcology-oracle--answering) 20 "the question to be sent")
          (kill-buffer note)
          (kill-new "before")
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
            (arcology-oracle-test--wait (lambda () (not arcology-oracle--answering)) 20 "the answer")
            (arcology-oracle-test--wait
             (lambda () (cl-find-if (lambda (m) (string-match-p "chat\\.org was killed before the answer came" m))
                                    messages))
             5 "the message"))
          (should (string-match-p "\\`\\*\\* " (current-kill 0))))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

;;;; Answers streaming side by side

(ert-deftest arcology-oracle-answers-test-new-entry-after-one-streaming ()
  "An answer asked while another still streams goes after it, not into it."
  (let ((arcology-oracle-result-display-action '(display-buffer-no-window (allow-no-window . t))))
    (unwind-protect
        (let* ((first (arcology-oracle--answer-start "First?"))
               (second (arcology-oracle--answer-start "Second?")))
          (arcology-oracle--insert-following first "one")
          (arcology-oracle--insert-following second "two")
          (arcology-oracle--insert-following first " more")
          (with-current-buffer arcology-oracle-answer-buffer-name
            (should (equal (buffer-string) "* First?\none more\n* Second?\ntwo"))))
      (when (get-buffer arcology-oracle-answer-buffer-name)
        (kill-buffer arcology-oracle-answer-buffer-name)))))

;; Pressing g on it asked (see tests/elisp/test_daemon_down_in_emacs.py in emacs -nw).
(ert-deftest arcology-oracle-answers-test-a-question-not-asked-is-replaced-when-asked ()
  "An entry that says it was not asked (the daemon down) is replaced when the same
question is asked again from the same note, answers and summaries alike: each try
while the daemon was down left an entry of its own.  Another note's, another
question's and an answered entry stay."
  (let ((arcology-oracle-result-display-action '(display-buffer-no-window (allow-no-window . t)))
        (down (propertize "daemon not reachable at http://127.0.0.1:9 (connection refused)"
                          'arcology-oracle-unanswered t 'arcology-oracle-unreachable t))
        (note (generate-new-buffer "note.org"))
        (other (generate-new-buffer "other.org")))
    (cl-flet ((entry (buffer heading &optional failure summary)
                (let* ((origin (with-current-buffer buffer (arcology-oracle--origin)))
                       (marker (arcology-oracle--answer-start
                                heading (and summary (arcology-oracle--answers-buffer
                                                      arcology-oracle-summary-buffer-name))
                                summary (list :origin origin))))
                  (if failure
                      (arcology-oracle--answer-failed marker failure)
                    (arcology-oracle--insert-following marker "An answer.\n"))))
              (headings (name)
                (with-current-buffer name
                  (let ((case-fold-search nil) (found nil))
                    (goto-char (point-min))
                    (while (re-search-forward "^\\* \\(.*\\)\n\\(Not asked\\|An answer\\)" nil t)
                      (push (concat (match-string 1) (if (equal (match-string 2) "An answer") " +" " -")) found))
                    (nreverse found)))))
      (unwind-protect
          (cl-letf (((symbol-function 'arcology-oracle--report) #'ignore))
            (entry note "Q?" down)
            (entry other "Q?" down)
            (entry note "R?" down)
            (entry note "Q?")
            (entry note "Q?" down)
            (entry note "Q?" down)
            (should (equal (headings arcology-oracle-answer-buffer-name) '("Q? -" "R? -" "Q? +" "Q? -")))
            (entry note "Q?")
            (should (equal (headings arcology-oracle-answer-buffer-name) '("Q? -" "R? -" "Q? +" "Q? +")))
            (with-current-buffer arcology-oracle-answer-buffer-name
              (should (string-suffix-p "\n\n* Q?\nAn answer.\n" (buffer-string)))
              (should-not (string-match-p "\n\n\n" (buffer-string))))
            (entry note "Summary of Note" down t)
            (entry note "Summary of Note" down t)
            (should (equal (headings arcology-oracle-summary-buffer-name) '("Summary of Note -")))
            (entry note "Summary of Note" nil t)
            (should (equal (headings arcology-oracle-summary-buffer-name) '("Summary of Note +"))))
        (dolist (buffer (list note other arcology-oracle-answer-buffer-name arcology-oracle-summary-buffer-name))
          (when (get-buffer buffer) (kill-buffer buffer)))))))

(ert-deftest arcology-oracle-answers-test-asked-in-a-private-part-the-prompt-says-so ()
  "C-c o a (and C-c o r) with point in a private heading say in their prompt that the
question alone is sent: it said \"Ask about this buffer: \", and the answer, about
nothing of the buffer, read as if it had been."
  (let ((prompts nil))
    (with-temp-buffer
      (insert "* Public\nbread\n* Diary :private:\nsecret words\n")
      (org-mode)
      (cl-letf (((symbol-function 'read-string) (lambda (prompt &rest _) (push prompt prompts) ""))
                ((symbol-function 'arcology-oracle--http-request) #'ignore))
        (dolist (where '("bread" "secret"))
          (goto-char (point-min))
          (search-forward where)
          (set-mark (line-beginning-position))
          (activate-mark)
          (dolist (command '(arcology-oracle-ask arcology-oracle-ask-region))
            (should-error (call-interactively command) :type 'user-error)))))  ; "Empty question"
    (should (equal (nreverse prompts)
                   '("Ask about this buffer: " "Ask about the region: "
                     "Ask (this part is private: the question alone is sent): "
                     "Ask (this part is private: the question alone is sent): ")))))

;;;; User errors in *Messages*

(defun arcology-oracle-answers-test--signaller (command buffer)
  "Run COMMAND in BUFFER through a command loop; return (MESSAGE . SIGNALLER).
SIGNALLER is what Emacs names before MESSAGE in *Messages* when it
is a symbol (the function that signalled), nil when no error."
  (let* ((caught nil)
         (backtrace-on-error-noninteractive nil)
         (debug-on-error nil)          ; ERT catches every error, user errors too
         (command-error-function (lambda (data _context signaller)
                                   (setq caught (cons (error-message-string data) signaller)))))
    (switch-to-buffer buffer)
    (global-set-key [f20] command)
    (global-set-key [f21] #'exit-recursive-edit)
    (unwind-protect
        (progn
          (setq unread-command-events (list 'f20 'f21))
          (recursive-edit))
      (global-unset-key [f20])
      (global-unset-key [f21]))
    caught))

(ert-deftest arcology-oracle-answers-test-user-errors-name-no-special-form ()
  "A command's user error is shown alone in *Messages*, not after \"if:\" or \"let:\".
The package runs here from its .el files, as the README's set-up loads it."
  (let ((text (generate-new-buffer "plain text"))
        (answers (generate-new-buffer "no answers")))
    (unwind-protect
        (progn
          (with-current-buffer answers (arcology-oracle-answers-mode))
          (should-not (byte-code-function-p (symbol-function 'arcology-oracle-discard)))
          (pcase-dolist (`(,command ,buffer ,message)
                         ;; One wording for a command outside Org: "... need(s) an Org buffer".
                         `((arcology-oracle-discard ,text "Discarding an answer needs an Org buffer")
                           (arcology-oracle-converse ,text "Conversations need an Org buffer")
                           (arcology-oracle-similar-show ,text "Similar notes need an Org buffer")
                           (arcology-oracle-suggest-links ,text "Link suggestions need an Org buffer")
                           (arcology-oracle-summarize ,text "Summaries need an Org buffer")
                           (arcology-oracle-make-private ,text "Making a note private needs an Org buffer")
                           (arcology-oracle-ask-region ,text "No active region")
                           (arcology-oracle-visit-result ,text "No note at point")
                           (arcology-oracle-answers-again ,answers "No answer at point to ask again")))
            (let ((caught (arcology-oracle-answers-test--signaller command buffer)))
              (should (equal (list command (car caught)) (list command message)))
              (should (equal (list command (and (symbolp (cdr caught)) (cdr caught))) (list command nil))))))
      (kill-buffer text)
      (kill-buffer answers))))

;; /summarize of the notes for a question says how they were found (its `mode'),
;; as /ask does: Emacs's summaries name a note (no mode), the stream is shared.
(ert-deftest arcology-oracle-answers-test-a-summary-of-notes-found-by-keywords-says-so ()
  "The embedder hung: the daemon summarizes the notes its keywords found, and the
summary's sources are headed \"Sources (keyword match only)\"."
  (arcology-oracle-test--with-daemon
    (let ((buffer (arcology-oracle--answers-buffer arcology-oracle-summary-buffer-name)))
      (arcology-oracle-test--fake-ollama '((fault_paths . ["/api/embed"]) (hang . t) (hang_max . 120)))
      (unwind-protect
          (progn
            (arcology-oracle--stream-answer
             (arcology-oracle--answer-start "Summary of rye starter" buffer t)
             "/summarize" '((question . "rye flour starter feeding") (stream . t)))
            (arcology-oracle-test--wait
             (lambda () (with-current-buffer buffer (string-match-p "^\\*\\* Sources" (buffer-string))))
             30 "the summary's sources")
            (with-current-buffer buffer
              (message "summary: %s" (buffer-string))
              (should (string-match-p "^\\*\\* Sources (keyword match only)\n- \\[1\\]" (buffer-string)))))
        (let ((arcology-oracle-url (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_OLLAMA"))
              (arcology-oracle-token "unused")
              done)
          (arcology-oracle--json "POST" "/_fake/release" :callback (lambda (_) (setq done t))
                                 :errback (lambda (_) (setq done t)))
          (arcology-oracle-test--wait (lambda () done) 10 "the fake Ollama's release"))
        (arcology-oracle-test--fake-ollama '((fault_paths) (hang . :json-false)))
        (kill-buffer buffer)))))

;; A model's tokens split lines anywhere: a bullet's star alone, a fence in pieces.
(ert-deftest arcology-oracle-answers-test-markdown-made-org-across-tokens ()
  "An answer's markdown is Org however its tokens split it, and a bullet
never shows as a heading, not even before its line ends."
  (with-temp-buffer
    (org-mode)
    (insert "* Question\n\n")
    (let ((marker (copy-marker (point-max)))
          (md (arcology-oracle--md-create))
          (headings nil))
      (dolist (token '("Try:\n" "*" " **Feed" " it**" " twice" "\n*" "*" "Bold" "**" " line\n"
                       "``" "`py\n" "* x\n" "#+end_src\n``" "`\n" "## Why" "\nuse `rye`"))
        (arcology-oracle--md-insert marker token md)
        (save-excursion
          (goto-char (point-min))
          (while (re-search-forward "^\\* " nil t) (push (line-number-at-pos) headings))))
      (arcology-oracle--md-finish marker md)
      (should (equal (delete-dups headings) '(1)))
      (should (equal (buffer-string)
                     (concat "* Question\n\nTry:\n- *Feed it* twice\n*Bold* line\n"
                             "#+begin_src py\n,* x\n,#+end_src\n#+end_src\n*Why*\nuse ~rye~"))))))

(provide 'arcology-oracle-answers-test)

;;; arcology-oracle-answers-test.el ends here
