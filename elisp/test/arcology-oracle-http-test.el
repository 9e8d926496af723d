;;; arcology-oracle-http-test.el --- ERT tests of arcology-oracle's HTTP client -*- lexical-binding: t -*-

;;; Commentary:

;; The HTTP client without a daemon.  The parser is fed raw responses
;; split anywhere; then the whole client (connection, filter, parser,
;; sentinel, JSON and NDJSON layers) talks over a real local socket to a
;; small server that replays responses the daemon really sent, recorded
;; in responses/*.http by tests/elisp_recordings.py.  Run with:
;;
;;   emacs -Q --batch -L elisp -L elisp/test -l ert \
;;         -l elisp/test/arcology-oracle-http-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'arcology-oracle-http)
(require 'arcology-oracle-cut-short)
(require 'arcology-oracle-test-support)

;;;; Parsing (pure)

(defun arcology-oracle-http-test--feed-split (response step)
  "Feed RESPONSE to a fresh parser STEP bytes at a time; return (REQ . BODY)."
  (let ((req (arcology-oracle--http-create)) (body ""))
    (cl-loop for i from 0 below (length response) by step
             do (setq body (concat body (arcology-oracle--http-feed
                                         req (substring response i (min (length response)
                                                                        (+ i step)))))))
    (cons req body)))

(ert-deftest arcology-oracle-http-test-content-length ()
  "A body framed by Content-Length parses whatever the split."
  (let ((response (concat "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          "Content-Length: 11\r\n\r\n{\"ok\":true}")))
    (dolist (step '(1 2 3 7 100))
      (pcase-let ((`(,req . ,body) (arcology-oracle-http-test--feed-split response step)))
        (should (equal body "{\"ok\":true}"))
        (should (eq (arcology-oracle--http-state req) 'done))
        (should (= (arcology-oracle--http-status req) 200))
        (should (equal (cdr (assoc "content-type" (arcology-oracle--http-headers req)))
                       "application/json"))))))

(ert-deftest arcology-oracle-http-test-chunked ()
  "Chunked bodies decode across splits, with extensions, trailers and UTF-8."
  (let* ((payload (encode-coding-string "{\"type\":\"token\",\"text\":\"café 日本\"}\n" 'utf-8))
         (a (substring payload 0 27))   ; cuts through a multibyte character
         (b (substring payload 27))
         (response (concat "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                           "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n"
                           (format "%x;ext=1\r\n" (length a)) a "\r\n"
                           (format "%X\r\n" (length b)) b "\r\n"
                           "0\r\nX-Trailer: yes\r\n\r\n")))
    (dolist (step '(1 2 5 13 1000))
      (pcase-let ((`(,req . ,body) (arcology-oracle-http-test--feed-split response step)))
        (should (equal body payload))
        (should (eq (arcology-oracle--http-state req) 'done))
        (should (equal (decode-coding-string body 'utf-8)
                       "{\"type\":\"token\",\"text\":\"café 日本\"}\n"))))))

(ert-deftest arcology-oracle-http-test-until-close-and-errors ()
  "Without framing the body runs to the close; garbage is rejected."
  (let ((req (arcology-oracle--http-create)))
    (should (equal (arcology-oracle--http-feed req "HTTP/1.0 200 OK\r\n\r\nabc") "abc"))
    (should (equal (arcology-oracle--http-feed req "def") "def"))
    (should (eq (arcology-oracle--http-state req) 'body))
    (should-not (arcology-oracle--http-remaining req)))
  (let ((req (arcology-oracle--http-create)))
    (should (equal (arcology-oracle--http-feed req "HTTP/1.1 204 No Content\r\n\r\n") ""))
    (should (eq (arcology-oracle--http-state req) 'done)))
  (should-error (arcology-oracle--http-feed (arcology-oracle--http-create)
                                            "SSH-2.0-OpenSSH\r\n\r\n"))
  (should-error (arcology-oracle--http-feed
                 (arcology-oracle--http-create)
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")))

(ert-deftest arcology-oracle-http-test-error-messages ()
  "The daemon's HTTP errors become one short line naming the status.
Anything else is not the daemon, and the line says so."
  (let ((arcology-oracle-url "http://127.0.0.1:7348"))
    (should (equal (arcology-oracle--error-message 404 '((ok) (error . "no node with ID 'x'")) "")
                   "no node with ID 'x' (HTTP 404)"))
    (should (equal (arcology-oracle--error-message 400 '((ok) (error . "bad\nmodel") (status . 400)) "")
                   "bad model (HTTP 400)"))
    (should (string-match-p "arcology-oracle-token.*(HTTP 401)"
                            (arcology-oracle--error-message
                             401 '((ok) (error . "missing or wrong bearer token") (status . 401)) "")))
    ;; Not the daemon's shape: an OpenAI-style error, nothing, a gateway's page.
    (should (equal (arcology-oracle--error-message 400 '((error (message . "bad model"))) "")
                   "no arcology-oracle daemon at http://127.0.0.1:7348 (it answered HTTP 400): check `arcology-oracle-url'"))
    (should (equal (arcology-oracle--error-message 401 nil "")
                   "no arcology-oracle daemon at http://127.0.0.1:7348 (it answered HTTP 401): check `arcology-oracle-url'"))
    (should (string-match-p "(it answered HTTP 502, as a proxy does when nothing answers behind it)"
                            (arcology-oracle--error-message 502 nil "Bad\ngateway")))))

;; The daemon's words are for people: what Emacs says to do comes from the field.
(ert-deftest arcology-oracle-http-test-missing-model-read-from-its-field ()
  "A missing chat model is known by the daemon's `missing_model', not its words.
The remedy (pull it, then ask again) comes from the field, whatever
the message says; words that read like a remedy, without the field,
give none."
  (let ((arcology-oracle-url "http://127.0.0.1:7348")
        (words "Ollama at http://h:11434 has no model 'm:7b' (not found); try `ollama pull m:7b`"))
    (should (equal (arcology-oracle--remedy
                    (arcology-oracle--error-message
                     503 `((ok) (error . ,words) (status . 503) (missing_model . "m:7b")) ""))
                   '("Ollama at http://h:11434 has no model 'm:7b' (not found) (HTTP 503)"
                     . "try `ollama pull m:7b`")))
    (should (equal (arcology-oracle--remedy
                    (arcology-oracle--error-message
                     503 '((ok) (error . "Ollama n'a pas m:7b") (status . 503) (missing_model . "m:7b")) ""))
                   '("Ollama n'a pas m:7b (HTTP 503)" . "try `ollama pull m:7b`")))
    (should (equal (arcology-oracle--remedy
                    (arcology-oracle--with-missing-model
                     '((type . "error") (message . "gone") (missing_model . "m:7b")) "gone"))
                   '("gone" . "try `ollama pull m:7b`")))
    (should-not (cdr (arcology-oracle--remedy
                      (arcology-oracle--error-message 503 `((ok) (error . ,words) (status . 503)) ""))))))

;;;; Recorded responses over a socket

(defconst arcology-oracle-http-test--responses
  (expand-file-name "responses" (file-name-directory (or load-file-name buffer-file-name)))
  "Directory of the recorded responses.")

(defun arcology-oracle-http-test--recorded (name)
  "Return the bytes of the recorded response NAME (responses/NAME.http)."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally
     (expand-file-name (concat name ".http") arcology-oracle-http-test--responses))
    (buffer-string)))

(defvar arcology-oracle-http-test--requests nil
  "Requests received by the replaying server, newest first.")

(defun arcology-oracle-http-test--request-complete-p (request)
  "Return non-nil when the raw REQUEST has its head and its whole body."
  (when-let ((end (string-search "\r\n\r\n" request)))
    (let ((length (and (string-match "^Content-Length: \\([0-9]+\\)" request)
                       (string-to-number (match-string 1 request)))))
      (>= (- (length request) end 4) (or length 0)))))

(defun arcology-oracle-http-test--send-pieces (conn bytes piece)
  "Send BYTES to CONN PIECE bytes at a time, one piece per turn of the event loop.
Close CONN after the last piece."
  (when (process-live-p conn)
    (if (string-empty-p bytes)
        (delete-process conn)
      (process-send-string conn (substring bytes 0 (min piece (length bytes))))
      (run-at-time 0 nil #'arcology-oracle-http-test--send-pieces
                   conn (substring bytes (min piece (length bytes))) piece))))

(defmacro arcology-oracle-http-test--with-server (spec &rest body)
  "Run BODY with a local server replaying bytes to each connection.
SPEC is (RESPONSE &optional PIECE): every connection, once its
request has arrived, gets the bytes RESPONSE, PIECE bytes at a time
\(default 7), and is then closed.  `arcology-oracle-url' points at
the server in BODY."
  (declare (indent 1) (debug ((form &optional form) body)))
  (let ((server (make-symbol "server")))
    `(let* ((response ,(car spec))
            (piece (or ,(cadr spec) 7))
            (arcology-oracle-http-test--requests nil)
            (,server
             (make-network-process
              :name "recorded-daemon" :server t :host "127.0.0.1" :service t
              :coding 'binary
              :filter (lambda (conn bytes)
                        (let ((request (concat (or (process-get conn :request) "") bytes)))
                          (process-put conn :request request)
                          (when (and (arcology-oracle-http-test--request-complete-p request)
                                     (not (process-get conn :answered)))
                            (process-put conn :answered t)
                            (push request arcology-oracle-http-test--requests)
                            (arcology-oracle-http-test--send-pieces conn response piece))))
              :sentinel #'ignore))
            (arcology-oracle-url (format "http://127.0.0.1:%d" (process-contact ,server :service)))
            (arcology-oracle-token "recorded-token"))
       (unwind-protect (progn ,@body)
         (delete-process ,server)))))

(defun arcology-oracle-http-test--json (method path &rest args)
  "Send a JSON request like `arcology-oracle--json' with METHOD, PATH and ARGS.
Wait until it is over; return (ANSWERS . ERRORS), each a list of
what the callback and the errback got, in order."
  (let (answers errors)
    (apply #'arcology-oracle--json method path
           :callback (lambda (a) (setq answers (append answers (list a))))
           :errback (lambda (m) (setq errors (append errors (list m))))
           args)
    (arcology-oracle-test--wait (lambda () (or answers errors)) 10 "an answer")
    (arcology-oracle-test--settled 10)
    (cons answers errors)))

(ert-deftest arcology-oracle-http-test-recorded-json ()
  "A recorded JSON answer reaches the callback once, parsed; the request is well formed."
  (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "status"))
    (pcase-let ((`(,answers . ,errors) (arcology-oracle-http-test--json "GET" "/status")))
      (should-not errors)
      (should (= (length answers) 1))
      (let ((status (car answers)))
        (should (eq (alist-get 'ok status) t))
        (should (integerp (alist-get 'headings status)))
        (should (> (alist-get 'headings status) 10))
        (should (stringp (alist-get 'model (alist-get 'embedder status))))))
    (let ((request (car arcology-oracle-http-test--requests)))
      (should (string-prefix-p "GET /status HTTP/1.1\r\n" request))
      (should (string-match-p "\r\nAuthorization: Bearer recorded-token\r\n" request))
      (should (string-match-p "\r\nConnection: close\r\n" request))
      (should (string-match-p "\r\nAccept: application/json\r\n" request)))))

(ert-deftest arcology-oracle-http-test-recorded-similar-utf-8 ()
  "Similar notes arrive one byte at a time and decode as UTF-8; JSON null reads as nil."
  (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "similar") 1)
    (pcase-let ((`(,answers . ,errors)
                 (arcology-oracle-http-test--json
                  "GET" "/similar" :query '(("node" "adda0990-28e8-487f-ae0a-eda5a8987581") ("k" 3)))))
      (should-not errors)
      (let ((results (alist-get 'results (car answers))))
        (should (equal (mapcar (lambda (r) (alist-get 'title r)) results)
                       '("Bread Hydration" "Baker's percentages" "2024-03-01")))
        (should (equal (alist-get 'heading (nth 2 results)) "Baked a sourdough loaf"))
        (should-not (alist-get 'heading_id (nth 2 results)))
        (should (string-suffix-p "proc…" (alist-get 'snippet (car results))))))
    (should (string-prefix-p
             "GET /similar?node=adda0990-28e8-487f-ae0a-eda5a8987581&k=3 HTTP/1.1\r\n"
             (car arcology-oracle-http-test--requests)))))

(ert-deftest arcology-oracle-http-test-recorded-ndjson-stream ()
  "A recorded chunked NDJSON answer gives its events in order, then on-done once."
  (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "ask-stream") 5)
    (let (events (done 0) errors)
      (arcology-oracle--ndjson
       "POST" "/ask" :json '((question . "How do I feed the starter?") (stream . t))
       :on-event (lambda (e) (setq events (append events (list e))))
       :on-done (lambda () (cl-incf done))
       :errback (lambda (m) (push m errors)))
      (arcology-oracle-test--wait (lambda () (or (> done 0) errors)) 10 "the end of the stream")
      (arcology-oracle-test--settled 10)
      (should-not errors)
      (should (= done 1))
      (should (equal (mapcar (lambda (e) (alist-get 'type e)) events)
                     (append '("sources") (make-list 11 "token") '("done"))))
      (let ((source (car (alist-get 'sources (car events)))))
        (should (equal (alist-get 'title source) "Starter maintenance"))
        (should (= (alist-get 'n source) 1)))
      (should (equal (mapconcat (lambda (e) (or (alist-get 'text e) "")) events "")
                     "Based on your notes [1]: How do I feed the starter?")))
    (let ((request (car arcology-oracle-http-test--requests)))
      (should (string-prefix-p "POST /ask HTTP/1.1\r\n" request))
      (should (string-match-p "\r\nAccept: application/x-ndjson\r\n" request))
      (should (string-suffix-p "\r\n\r\n{\"question\":\"How do I feed the starter?\",\"stream\":true}"
                               request)))))

(ert-deftest arcology-oracle-http-test-token-added-after-a-401 ()
  "A token added to the authinfo file after a 401 is sent at the next request.
The absence of a token was remembered (by the package and by
auth-source), so the line the 401's message asks for was not read:
the same 401 again until \\[arcology-oracle-forget-token]."
  (let* ((authinfo (make-temp-file "authinfo"))
         (auth-sources (list authinfo))
         (arcology-oracle--token-cache nil))
    (unwind-protect
        (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "unauthorized"))
          (let ((arcology-oracle-token nil)
                (port (url-port (url-generic-parse-url arcology-oracle-url))))
            ;; The entry to add is named, with the host and port it is looked up by.
            (should (equal (cdr (arcology-oracle-http-test--json "GET" "/status"))
                           (list (format "unauthorized: set `arcology-oracle-token' or add \"machine 127.0.0.1 port %d password TOKEN\" to ~/.authinfo (HTTP 401)"
                                         port))))
            (should-not (string-match-p "Authorization" (car arcology-oracle-http-test--requests)))
            (with-temp-file authinfo
              (insert (format "machine 127.0.0.1 port %d password added-token\n" port)))
            (arcology-oracle-http-test--json "GET" "/status")
            (should (string-match-p "\r\nAuthorization: Bearer added-token\r\n"
                                    (car arcology-oracle-http-test--requests)))))
      (auth-source-forget-all-cached)
      (delete-file authinfo))))

(ert-deftest arcology-oracle-http-test-token-of-the-daemon-s-port ()
  "Of several ~/.authinfo lines for the daemon's host, the one with its port gives
the token: an earlier line without a port (a mail account on 127.0.0.1, say)
matches any port, and its password was sent, refused with a 401 that named the
line already there."
  (let* ((authinfo (make-temp-file "authinfo"))
         (auth-sources (list authinfo))
         (arcology-oracle--token-cache nil))
    (unwind-protect
        (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "status"))
          (let ((arcology-oracle-token nil)
                (port (url-port (url-generic-parse-url arcology-oracle-url))))
            (with-temp-file authinfo
              (insert "machine 127.0.0.1 login me password mail-password\n"
                      (format "machine 127.0.0.1 port %d password daemon-token\n" (1+ port))
                      (format "machine 127.0.0.1 port %d password the-token\n" port)))
            (auth-source-forget-all-cached)
            (arcology-oracle-http-test--json "GET" "/status")
            (should (string-match-p "\r\nAuthorization: Bearer the-token\r\n"
                                    (car arcology-oracle-http-test--requests)))
            ;; Only lines without a port: the first, as before.
            (with-temp-file authinfo
              (insert "machine 127.0.0.1 login me password mail-password\n"
                      "machine 127.0.0.1 password other\n"))
            (arcology-oracle-forget-token)
            (should (equal (arcology-oracle-auth-token) "mail-password"))))
      (auth-source-forget-all-cached)
      (delete-file authinfo))))

(ert-deftest arcology-oracle-http-test-an-answer-of-unreadable-lines-fails ()
  "A 200 whose lines are not the daemon's (a proxy's page, garbage) is a failed
answer, not an empty one: it showed the question, nothing, then \"- none: no
notes were relevant enough\" under Sources."
  (require 'arcology-oracle-answer-stream)
  (arcology-oracle-http-test--with-server
      ((concat "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
               "\x00\xffnot json at all {{{\n<html>oops</html>\n"))
    (let ((arcology-oracle--last-report nil))
      (with-temp-buffer
        (insert "* A question\n")
        (let ((marker (point-marker)))
          (arcology-oracle--stream-answer marker "/ask" '((question . "A question") (stream . t)))
          (arcology-oracle-test--wait (lambda () (string-match-p "Failed" (buffer-string))) 10 "the failure")
          (arcology-oracle-test--settled 10)
          (should (equal (buffer-string)
                         "* A question\n[Failed: the daemon sent no answer that could be read]\n"))
          (should-not arcology-oracle--answering))))))

(ert-deftest arcology-oracle-http-test-sources-that-left-the-index-are-not-called-irrelevant ()
  "Notes used for an answer, then made private before its first words: the
daemon names none of them (its sources event empty, used_notes true), and the
answer said \"- none: no notes were relevant enough\", which was not so."
  (require 'arcology-oracle-answer-stream)
  (arcology-oracle-http-test--with-server
      ((concat "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
               "{\"type\": \"sources\", \"sources\": [], \"used_notes\": true, \"model\": \"m\"}\n"
               "{\"type\": \"token\", \"text\": \"Water it.\"}\n{\"type\": \"done\"}\n"))
    (with-temp-buffer
      (insert "* A question\n")
      (let ((marker (point-marker)))
        (arcology-oracle--stream-answer marker "/ask" '((question . "A question") (stream . t)))
        (arcology-oracle-test--wait (lambda () (string-match-p "Sources" (buffer-string))) 10 "the sources")
        (arcology-oracle-test--settled 10)
        (should (string-match-p "Water it\\.\n\n\\*\\* Sources\n- none: the notes used have left the index since"
                                (buffer-string)))))))

(ert-deftest arcology-oracle-http-test-recorded-errors ()
  "Recorded 401 and 404 answers become one short message each, never the callback.
A token sent and refused is said to be refused (the message said to set one)."
  (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "unauthorized"))
    (should (equal (arcology-oracle-http-test--json "GET" "/status")
                   (list nil (format "unauthorized: the daemon refused the token sent (`arcology-oracle-token' or \"machine 127.0.0.1 port %d password TOKEN\") (HTTP 401)"
                                     (url-port (url-generic-parse-url arcology-oracle-url)))))))
  (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "unknown-node"))
    (should (equal (arcology-oracle-http-test--json "GET" "/nodes/no-such-id")
                   '(nil "no node with ID 'no-such-id' in the index (HTTP 404)")))))

(ert-deftest arcology-oracle-http-test-cut-off-answers ()
  "An answer cut off mid-body fails once, after what arrived of a stream."
  (let ((status (arcology-oracle-http-test--recorded "status")))
    (arcology-oracle-http-test--with-server ((substring status 0 (- (length status) 40)))
      (should (equal (arcology-oracle-http-test--json "GET" "/status")
                     '(nil "the daemon went away mid-answer (it closed the connection)")))))
  (let* ((stream (arcology-oracle-http-test--recorded "ask-stream"))
         (cut (string-search "your " stream)))
    (arcology-oracle-http-test--with-server ((substring stream 0 cut))
      (let (events errors (done 0))
        (arcology-oracle--ndjson "POST" "/ask" :json '((question . "q"))
                                 :on-event (lambda (e) (setq events (append events (list e))))
                                 :on-done (lambda () (cl-incf done))
                                 :errback (lambda (m) (setq errors (append errors (list m)))))
        (arcology-oracle-test--wait (lambda () errors) 10 "the failure")
        (arcology-oracle-test--settled 10)
        (should (equal errors '("the daemon went away mid-answer (it closed the connection)")))
        (should (= done 0))
        (should (equal (mapcar (lambda (e) (alist-get 'type e)) events)
                       '("sources" "token" "token")))))))

;; The answers buffer's own streaming, over the same cut-off recording.
(declare-function arcology-oracle--stream-answer "arcology-oracle-answer-stream" (marker path payload))

(ert-deftest arcology-oracle-http-test-cut-off-answer-keeps-its-sources ()
  "An answer cut off mid-stream still lists its sources, its failure on a line of its own.
The text that arrived cites [N]: without the Sources list the
reader could not follow them (the daemon killed, the connection
gone, the timeout); the failure is not glued to the last word."
  (require 'arcology-oracle-answer-stream)
  (let* ((stream (arcology-oracle-http-test--recorded "ask-stream"))
         (cut (string-search "notes " stream)))
    (arcology-oracle-http-test--with-server ((substring stream 0 cut))
      (with-temp-buffer
        (let ((marker (copy-marker (point-min)))
              (inhibit-message t))
          (arcology-oracle--stream-answer marker "/ask" '((question . "q")))
          (arcology-oracle-test--wait (lambda () (null (marker-buffer marker))) 10 "the answer to end")
          (arcology-oracle-test--settled 10)
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (should (string-match-p "Based on your ?\n\n\\[Failed: the daemon went away mid-answer (it closed the connection); what came is kept above, g asks again\\]\n" text))
            (should (string-match-p "^\\*\\* Sources\n- \\[1\\] \\[\\[id:612f2887-9442-410d-b965-d901189a423b\\]" text))))))))

(defun arcology-oracle-http-test--response (status type body)
  "Return an HTTP response of STATUS (\"404 Not Found\"), Content-Type TYPE and BODY.
TYPE nil sends no Content-Type; BODY is framed by its length."
  (concat "HTTP/1.1 " status "\r\n"
          (if type (format "Content-Type: %s\r\n" type) "")
          (format "Content-Length: %d\r\n\r\n" (string-bytes body))
          body))

(defun arcology-oracle-http-test--not-the-daemon (what)
  "Return the message for a server at `arcology-oracle-url' that is not the daemon.
WHAT says what it answered."
  (format "no arcology-oracle daemon at %s (%s): check `arcology-oracle-url'" arcology-oracle-url what))

(ert-deftest arcology-oracle-http-test-not-the-daemon ()
  "A web server that is not the daemon (a wrong `arcology-oracle-url') is named so.
The daemon's errors are JSON objects {\"ok\": false, \"error\": ...};
anything else (Ollama's text, an HTML page, nothing) is not the daemon."
  (dolist (case `((,(arcology-oracle-http-test--response "404 Not Found" "text/plain; charset=utf-8" "404: Not Found")
                   "it answered HTTP 404")
                  (,(arcology-oracle-http-test--response
                     "404 Not Found" "text/html" "<html><body><h1>Not Found</h1>\n<p>Nope</p></body></html>")
                   "it answered HTTP 404")
                  (,(arcology-oracle-http-test--response "405 Method Not Allowed" nil "")
                   "it answered HTTP 405")
                  (,(arcology-oracle-http-test--response "404 Not Found" "application/json" "{\"detail\":\"Not Found\"}")
                   "it answered HTTP 404")
                  (,(arcology-oracle-http-test--response "502 Bad Gateway" "text/html" "<html>Bad gateway</html>")
                   "it answered HTTP 502, as a proxy does when nothing answers behind it")
                  (,(arcology-oracle-http-test--response "200 OK" "text/html" "<html><body>Hi</body></html>")
                   "it answered HTTP 200 with text/html, not JSON")))
    (arcology-oracle-http-test--with-server ((car case))
      (should (equal (arcology-oracle-http-test--json "GET" "/status")
                     (list nil (arcology-oracle-http-test--not-the-daemon (cadr case))))))))

(ert-deftest arcology-oracle-http-test-not-the-daemon-stream ()
  "A streamed request answered by something else fails once, naming it; no line is parsed."
  (dolist (case `((,(arcology-oracle-http-test--response "404 Not Found" "text/plain" "404: Not Found")
                   "it answered HTTP 404")
                  (,(arcology-oracle-http-test--response "200 OK" "text/html" "<html>\n<body>\nHi\n</body>\n</html>\n")
                   "it answered HTTP 200 with text/html, not a stream of JSON lines")))
    (arcology-oracle-http-test--with-server ((car case))
      (let (events errors (done 0))
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle--ndjson "POST" "/ask" :json '((question . "q"))
                                   :on-event (lambda (e) (push e events))
                                   :on-done (lambda () (cl-incf done))
                                   :errback (lambda (m) (setq errors (append errors (list m)))))
          (arcology-oracle-test--wait (lambda () errors) 10 "the failure")
          (arcology-oracle-test--settled 10)
          (should-not (cl-find-if (lambda (m) (string-match-p "malformed" m)) messages)))
        (should (equal errors (list (arcology-oracle-http-test--not-the-daemon (cadr case)))))
        (should (= done 0))
        (should-not events)))))

(ert-deftest arcology-oracle-http-test-not-http ()
  "Something that is not an HTTP response fails the request with a message."
  (arcology-oracle-http-test--with-server ("SSH-2.0-OpenSSH_9.2\r\n\r\n")
    (pcase-let ((`(,answers . ,errors) (arcology-oracle-http-test--json "GET" "/status")))
      (should-not answers)
      (should (equal (length errors) 1))
      (should (string-prefix-p "bad response from the daemon (Not an HTTP response" (car errors))))))

(ert-deftest arcology-oracle-http-test-silent-server-times-out ()
  "A server that accepts but never answers fails the request after the timeout."
  (let* ((server (make-network-process :name "silent" :server t :host "127.0.0.1" :service t
                                       :filter #'ignore :sentinel #'ignore))
         (arcology-oracle-url (format "http://127.0.0.1:%d" (process-contact server :service)))
         (arcology-oracle-token "x")
         result)
    (unwind-protect
        (progn
          (arcology-oracle--json "GET" "/status" :timeout 0.5
                                 :callback (lambda (a) (setq result a))
                                 :errback (lambda (m) (setq result m)))
          (arcology-oracle-test--wait (lambda () result) 10)
          (should (equal result "no answer from the daemon within 0.5 seconds")))
      (delete-process server))))

(ert-deftest arcology-oracle-http-test-an-unreachable-daemon-fails-whatever-its-hook-does ()
  "A function of `arcology-oracle--unreachable-functions' that signals does not strand
the request: its error callback still runs.  It never did (the sentinel stopped at the
error, and the watchdog ran the hook again), so a command waited for good."
  (let* ((server (make-network-process :name "gone" :server t :host "127.0.0.1" :service t
                                       :filter #'ignore :sentinel #'ignore))
         (arcology-oracle-url (format "http://127.0.0.1:%d" (process-contact server :service)))
         (arcology-oracle-token "x")
         (arcology-oracle--unreachable-functions (list (lambda (_url) (error "A broken hook"))))
         result)
    (delete-process server)             ; nobody listens there now: refused
    (with-demoted-errors "%S"
      (arcology-oracle--json "GET" "/status" :timeout 2
                             :callback (lambda (a) (setq result a))
                             :errback (lambda (m) (setq result m))))
    (arcology-oracle-test--wait (lambda () result) 10 "the error callback")
    (should (string-match-p "daemon not reachable" result))))

;; emacsql, which org-roam's queries go through, waits for its database
;; in `accept-process-output'; the stand-in waits so too, for the answer.
(ert-deftest arcology-oracle-http-test-no-callback-inside-an-org-roam-query ()
  "An answer that arrives while org-roam waits for its database is handled after.
Its callback ran inside that wait, and one that asked the database
\(a list's backlinks, the org-roam buffer rendered again) mixed the
two answers up: org-roam's own render failed.  So too inside
org-roam's render of its buffer, where a wait (a passphrase prompt)
would have let the callback render it again midway."
  (dolist (waiting '(emacsql org-roam-buffer-render-contents))
    (arcology-oracle-http-test--with-server ((arcology-oracle-http-test--recorded "status"))
      (let (answer req answered-inside)
        (setq req (arcology-oracle--json "GET" "/status"
                                         :callback (lambda (a) (setq answer a))
                                         :errback (lambda (m) (setq answer m))))
        (should (arcology-oracle--http-p req))
        (cl-letf (((symbol-function waiting)
                   (lambda (&rest _)
                     (let ((deadline (+ (float-time) 10)))
                       (while (and (not (arcology-oracle--http-finished req))
                                   (< (float-time) deadline))
                         (accept-process-output nil 0.05))
                       ;; Timers run during the wait too: one more turn for them.
                       (accept-process-output nil 0.2))
                     (setq answered-inside answer)
                     '((rows)))))
          (funcall waiting))
        (should (arcology-oracle--http-finished req))
        (should-not (and answered-inside waiting))
        (arcology-oracle-test--wait (lambda () answer) 10 "the answer after the wait")
        (should (eq (alist-get 'ok answer) t))))))

;; No route of the daemon refuses link suggestions for good today (its 409
;; there is "ask again once it is indexed"): a daemon that does is served here.
(ert-deftest arcology-oracle-http-test-links-refused-for-good-offer-no-retry ()
  "Link suggestions refused by a 409 whose retry is false say so as capture and
forget do (`arcology-oracle--refusal'), in the echo area and in the list, and
offer no retry; one whose retry is true names g once."
  (require 'arcology-oracle-links)
  (dolist (case '((:json-false "the note leads out of the roam directory: move it back"
                   "\\`No suggestions, and trying again will not change that: the note leads out of the roam directory: move it back (HTTP 409)\\'")
                  (t "another program holds the note: try again in a moment"
                     "\\`No suggestions yet: another program holds the note: try again with g in a moment (HTTP 409)\\'")))
    (arcology-oracle-http-test--with-server
        ((arcology-oracle-http-test--response
          "409 Conflict" "application/json; charset=utf-8"
          (json-encode `((ok . :json-false) (error . ,(nth 1 case)) (status . 409) (retry . ,(car case))))))
      (let ((arcology-oracle--last-report nil)
            (source (generate-new-buffer "note")))
        (unwind-protect
            (progn
              (arcology-oracle--links-request source "5e1f0000-0000-4000-8000-00000000beef" "Brand new")
              (arcology-oracle-test--wait (lambda () (car arcology-oracle--last-report)) 10 "the refusal")
              (let ((said (car arcology-oracle--last-report))
                    (shown (with-current-buffer arcology-oracle-links-buffer-name
                             (replace-regexp-in-string "[ \n]+" " " (buffer-substring-no-properties (point-min) (point-max))))))
                (message "refused, retry %s: %s" (car case) said)
                (should (string-match-p (nth 2 case) said))
                (should (string-suffix-p (concat "Links to add to: Brand new " said " ") shown))
                ;; Retrying is offered once, or not at all ("trying again will not").
                (should (= (length (split-string said "\\<again\\>")) 2))
                (should (eq (eq (car case) t) (and (string-match-p "with g\\>" said) t)))))
          (kill-buffer source))))))

(provide 'arcology-oracle-http-test)

;;; arcology-oracle-http-test.el ends here
